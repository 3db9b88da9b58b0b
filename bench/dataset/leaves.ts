import {
  addWorkdays,
  clamp,
  clockTime,
  type Day,
  isoDate,
  later,
  nextWorkday,
  officeMoment,
  timestamp,
  workdaysBetween,
} from '../../src/demo/calendar.ts';
import { type Context, type DemoRecord, RETIRED_BEFORE_DAYS } from '../../src/demo/context.ts';
import { leaveTypeRecords } from '../../src/demo/leaves.ts';
import { chance, int, list, pick, type Rng, weighted, weightedKey } from '../../src/demo/random.ts';
import type { DurationType, LeaveStatus } from '../../src/domain.ts';
import type { BenchEmployee } from './employees.ts';
import { FIRST_DAY, slot } from './period.ts';

/**
 * Leaves: the demo's leave types (src/demo/leaves.ts), and for each employee a given number of
 * leaves, one in each equal stretch of the days they worked, so they spread over the years and
 * never overlap. How each type behaves is keyed by its type_key.
 */

interface LeaveRule {
  weight: number;
  workdays: readonly [number, number];
  /** Half days and hours are allowed. */
  partial: boolean;
  /** Requested weeks ahead; otherwise reported on the day (sickness). */
  bookedAhead: boolean;
  /** The proof to hand in and the days after the start it is due. */
  document: readonly [string, number] | null;
  reasons: readonly string[];
}

const RULES: Record<string, LeaveRule> = {
  annual: {
    weight: 60,
    workdays: [1, 10],
    partial: true,
    bookedAhead: true,
    document: null,
    reasons: list(
      'Family holiday | Summer vacation in Bodrum | Visiting parents in Trabzon | Moving house | Skiing trip to Uludağ | Kurban Bayramı with family | Urlaub in Österreich',
    ),
  },
  sick: {
    weight: 24,
    workdays: [1, 5],
    partial: true,
    bookedAhead: false,
    document: ['medical-report.pdf', 3],
    reasons: list('Flu | Dental treatment | Back pain | Migraine | Minor surgery | Grippe'),
  },
  unpaid: {
    weight: 5,
    workdays: [3, 15],
    partial: false,
    bookedAhead: true,
    document: null,
    reasons: list('Extended travel | Caring for a family member | Personal reasons'),
  },
  parental: {
    weight: 1,
    workdays: [5, 80],
    partial: false,
    bookedAhead: true,
    document: ['birth-certificate.pdf', 30],
    reasons: list('Birth of our child | Adoption'),
  },
  marriage: {
    weight: 1,
    workdays: [3, 3],
    partial: false,
    bookedAhead: true,
    document: ['marriage-certificate.pdf', 14],
    reasons: list('Our wedding | Wedding ceremony in Antalya'),
  },
  compensatory: {
    weight: 4,
    workdays: [1, 2],
    partial: false,
    bookedAhead: false,
    document: null,
    reasons: list('Overtime during the year-end release | Weekend on-call duty'),
  },
};

const PARTIAL_REASONS = list(
  'Doctor appointment | Bank appointment | Parent-teacher meeting | Car inspection | Notary visit',
);

const LEAVE_REJECTIONS = list(
  'Overlaps with the quarter-end closing. | The team is already at minimum staffing on these dates. | Not enough annual leave balance left. | Please split this into two shorter periods.',
);

interface LeaveKind {
  id: number;
  rule: LeaveRule;
}

/** The company's leave types, and which of them a leave starting on a day may have. */
export interface LeaveTypes {
  records: DemoRecord[];
  all: readonly (readonly [LeaveKind, number])[];
  /** Retired types only appear on leaves from before they were retired. */
  current: readonly (readonly [LeaveKind, number])[];
  retiredFrom: Day;
}

export function leaveTypes(ctx: Context): LeaveTypes {
  const records = leaveTypeRecords(ctx, ctx.ids.leaveType);
  const kinds = records.map((record) => {
    const rule = RULES[String(record.type_key)];
    if (rule === undefined) throw new Error(`bench: no leave rule for type ${record.type_key}`);
    return { kind: { id: Number(record.id), rule }, active: record.active === true };
  });
  const entry = ({ kind }: { kind: LeaveKind }) => [kind, kind.rule.weight] as const;
  return {
    records,
    all: kinds.map(entry),
    current: kinds.filter((k) => k.active).map(entry),
    retiredFrom: ctx.today - RETIRED_BEFORE_DAYS,
  };
}

interface PartialTimes {
  days: number;
  start_time: string | null;
  end_time: string | null;
  hours: number | null;
}

function durationFields(rng: Rng, duration: DurationType, start: Day, end: Day): PartialTimes {
  if (duration === 'half_day') return { days: 0.5, start_time: null, end_time: null, hours: null };
  if (duration === 'full_day') {
    const days = workdaysBetween(start, end);
    return { days, start_time: null, end_time: null, hours: null };
  }
  const startMinutes = int(rng, 16, 28) * 30; // 08:00 to 14:00
  const halfHours = int(rng, 2, 8);
  const hours = halfHours / 2;
  return {
    days: hours / 8, // an 8-hour working day; exact in binary for half hours
    start_time: clockTime(startMinutes),
    end_time: clockTime(startMinutes + halfHours * 30),
    hours,
  };
}

function leaveDocument(rng: Rng, rule: LeaveRule, start: Day, today: Day): DemoRecord | null {
  if (rule.document === null) return null;
  const [fileName, dueAfter] = rule.document;
  const deadline = start + dueAfter;
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
  types: LeaveTypes,
  employee: BenchEmployee,
  employeeCount: number,
  count: number,
  firstId: number,
): Generator<DemoRecord> {
  const { rng } = ctx;
  for (let i = 0; i < count; i++) {
    const [slotStart, slotEnd] = slot(employee.from, employee.to, i, count);
    const start = nextWorkday(int(rng, slotStart, slotEnd));
    const { id: typeId, rule } = weighted(
      rng,
      start < types.retiredFrom ? types.all : types.current,
    );
    const duration: DurationType = rule.partial
      ? weightedKey(rng, { full_day: 78, half_day: 11, hourly: 11 })
      : 'full_day';
    const end =
      duration === 'full_day'
        ? Math.max(start, Math.min(addWorkdays(start, int(rng, ...rule.workdays)), slotEnd))
        : start;
    const status = weightedKey<LeaveStatus>(rng, {
      approved: 70,
      pending: 12,
      rejected: 10,
      cancelled: 8,
    });
    const times = durationFields(rng, duration, start, end);
    const createdDay = clamp(
      rule.bookedAhead ? start - int(rng, 3, 40) : start + int(rng, 0, 1),
      Math.max(employee.hireDay, FIRST_DAY),
      ctx.lastDay,
    );
    const createdAt = officeMoment(rng, createdDay);
    const approvedAt = status === 'approved' ? later(rng, createdAt, 0, 3, ctx.lastDay) : null;
    const decidedAt =
      status === 'rejected' || status === 'cancelled'
        ? later(rng, createdAt, 0, 10, ctx.lastDay)
        : null;
    const covered =
      duration === 'full_day' && times.days >= 2 && status !== 'rejected' && employeeCount > 1;
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
      ...times,
      reason: chance(rng, 0.7)
        ? pick(rng, duration === 'full_day' ? rule.reasons : PARTIAL_REASONS)
        : null,
      rejection_reason: status === 'rejected' ? pick(rng, LEAVE_REJECTIONS) : null,
      substitute_employee_id:
        covered && chance(rng, 0.3) ? substitute(rng, ctx, employeeCount, employee.id) : null,
      approved_at: approvedAt === null ? null : timestamp(approvedAt),
      created_at: timestamp(createdAt),
      updated_at: timestamp(approvedAt ?? decidedAt ?? createdAt),
      document: documented ? leaveDocument(rng, rule, start, ctx.today) : null,
    };
  }
}
