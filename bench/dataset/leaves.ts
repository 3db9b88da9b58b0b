import { addWorkdays, clamp, type Day, isoDate, nextWorkday } from '../../src/demo/calendar.ts';
import type { Context, DemoRecord } from '../../src/demo/context.ts';
import {
  LEAVE_REJECTIONS,
  LEAVE_TYPES,
  type LeaveTypeSpec,
  leaveLength,
  leaveTimestamps,
  leaveTypeRecords,
} from '../../src/demo/leaves.ts';
import { chance, int, list, pick, type Rng, weightedKey } from '../../src/demo/random.ts';
import type { DurationType, LeaveStatus } from '../../src/domain.ts';
import type { BenchEmployee } from './employees.ts';
import { type Kinds, kindsOf } from './kinds.ts';
import { FIRST_DAY, slot } from './period.ts';

/**
 * Leaves: the demo's leave types (src/demo/leaves.ts), and for each employee a given number of
 * leaves, one in each equal stretch of the days they worked, so they spread over the years and
 * never overlap.
 */

/** Half days and hours give one of these reasons, whichever type allows them. */
const PARTIAL_REASONS = list(
  'Doctor appointment | Bank appointment | Parent-teacher meeting | Car inspection | Notary visit',
);

/** Where the bench's leave types draw differently from the demo's, by type_key. */
const BENCH_CHANGES: Record<string, Partial<LeaveTypeSpec>> = {
  annual: {
    reasons: list(
      'Family holiday | Summer vacation in Bodrum | Visiting parents in Trabzon | Moving house | Skiing trip to Uludağ | Kurban Bayramı with family | Urlaub in Österreich',
    ),
    partialReasons: PARTIAL_REASONS,
  },
  sick: {
    reasons: list('Flu | Dental treatment | Back pain | Migraine | Minor surgery | Grippe'),
    partialReasons: PARTIAL_REASONS,
  },
  parental: { weight: 1 },
  marriage: { weight: 1 },
};

interface LeaveKind {
  id: number;
  spec: LeaveTypeSpec;
}

/** The company's leave types, with the bench's changes. */
export function leaveTypes(ctx: Context): Kinds<LeaveKind> {
  const kinds = LEAVE_TYPES.map((spec, i) => ({
    id: ctx.ids.leaveType + i,
    spec: { ...spec, ...BENCH_CHANGES[spec.key] },
  }));
  return kindsOf(ctx, leaveTypeRecords(ctx, ctx.ids.leaveType), kinds);
}

function leaveDocument(rng: Rng, spec: LeaveTypeSpec, start: Day, today: Day): DemoRecord | null {
  const fileName = spec.documentFile;
  if (fileName === null) return null;
  const deadline = start + spec.documentDays;
  const obligation =
    deadline < today
      ? weightedKey(rng, { accepted: 80, submitted: 12, pending: 8 })
      : weightedKey(rng, { pending: 60, submitted: 40 });
  return {
    deadline: isoDate(deadline),
    obligation_status: obligation,
    attachments: obligation === 'pending' ? [] : [{ file_name: fileName }],
  };
}

/** Someone else from the company (employee ids are consecutive) who covers a longer leave. */
function substitute(rng: Rng, ctx: Context, employeeCount: number, selfId: number): number {
  const other = int(rng, ctx.ids.employee, ctx.ids.employee + employeeCount - 2);
  return other >= selfId ? other + 1 : other;
}

export function* employeeLeaves(
  ctx: Context,
  types: Kinds<LeaveKind>,
  employee: BenchEmployee,
  employeeCount: number,
  count: number,
  firstId: number,
): Generator<DemoRecord> {
  const { rng } = ctx;
  for (let i = 0; i < count; i++) {
    const [slotStart, slotEnd] = slot(employee.from, employee.to, i, count);
    const start = nextWorkday(int(rng, slotStart, slotEnd));
    const { id: typeId, spec } = types.draw(rng, start);
    const duration: DurationType =
      spec.partialReasons.length > 0
        ? weightedKey(rng, { full_day: 78, half_day: 11, hourly: 11 })
        : 'full_day';
    const end =
      duration === 'full_day'
        ? Math.max(start, Math.min(addWorkdays(start, int(rng, ...spec.workdays)), slotEnd))
        : start;
    const status = weightedKey<LeaveStatus>(rng, {
      approved: 70,
      pending: 12,
      rejected: 10,
      cancelled: 8,
    });
    const length = leaveLength(rng, duration, start, end);
    const createdDay = clamp(
      spec.bookedAhead ? start - int(rng, 3, 40) : start + int(rng, 0, 1),
      Math.max(employee.hireDay, FIRST_DAY),
      ctx.lastDay,
    );
    const times = leaveTimestamps(rng, createdDay, status, ctx.lastDay);
    const covered =
      duration === 'full_day' && length.days >= 2 && status !== 'rejected' && employeeCount > 1;
    const documented = duration === 'full_day' && status !== 'cancelled';
    yield {
      type: 'leave',
      company_id: ctx.companyId,
      id: firstId + i,
      employee_id: employee.id,
      leave_type_id: typeId,
      status,
      start_date: isoDate(start),
      end_date: isoDate(end),
      duration_type: duration,
      days: length.days,
      start_time: length.startTime,
      end_time: length.endTime,
      hours: length.hours,
      reason: chance(rng, 0.7)
        ? pick(rng, duration === 'full_day' ? spec.reasons : spec.partialReasons)
        : null,
      rejection_reason: status === 'rejected' ? pick(rng, LEAVE_REJECTIONS) : null,
      substitute_employee_id:
        covered && chance(rng, 0.3) ? substitute(rng, ctx, employeeCount, employee.id) : null,
      approved_at: times.approved,
      created_at: times.created,
      updated_at: times.updated,
      document: documented ? leaveDocument(rng, spec, start, ctx.today) : null,
    };
  }
}
