import { DURATION_TYPES, type DurationType, type LeaveStatus } from '../domain.ts';
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
} from './calendar.ts';
import { type Context, type DemoRecord, RETIRED_BEFORE_DAYS } from './context.ts';
import { LEAVE_TYPES, type LeaveTypeSpec } from './leave-types.ts';
import type { Employee } from './people.ts';
import { chance, int, pick, type Rng, weighted, weightedKey } from './random.ts';

/**
 * Each employee's leaves: about a year of them, planned without overlaps, with statuses,
 * documents, substitutes and timestamps that fit together. The leave types are in
 * leave-types.ts (re-exported here, where bench/ imports them from).
 */

export { LEAVE_TYPES, type LeaveTypeSpec, leaveTypeRecords } from './leave-types.ts';

/** Why a manager turned a leave down. */
export const LEAVE_REJECTIONS = [
  'Overlaps with the quarter-end closing.',
  'The team is already at minimum staffing on these dates.',
  'Not enough annual leave balance left.',
  'Please split this into two shorter periods.',
];

export interface PlannedLeave {
  spec: LeaveTypeSpec;
  typeId: number;
  duration: DurationType;
  start: Day;
  end: Day;
  future: boolean;
}

/** One candidate leave, or null when its type has no room in the employee's window. */
function drawLeave(
  ctx: Context,
  employee: Employee,
  future: boolean,
  forcedDuration: DurationType | undefined,
  used: Set<string>,
): PlannedLeave | null {
  const { rng } = ctx;
  // A forced half day or hourly leave needs a type that allows it; annual leave (first) does.
  const index =
    forcedDuration !== undefined
      ? 0
      : weighted(
          rng,
          LEAVE_TYPES.flatMap((spec, i) =>
            (!future || spec.bookedAhead) && !(spec.oncePerEmployee && used.has(spec.key))
              ? [[i, spec.weight] as const]
              : [],
          ),
        );
  const spec = LEAVE_TYPES[index];
  if (spec === undefined) return null;
  const windowStart = future ? ctx.today + 1 : employee.from;
  let windowEnd = future ? ctx.today + 60 : employee.to;
  if (!spec.active) windowEnd = Math.min(windowEnd, ctx.today - RETIRED_BEFORE_DAYS);
  if (windowStart > windowEnd) return null;
  const start = nextWorkday(int(rng, windowStart, windowEnd));
  const duration =
    forcedDuration ??
    (spec.partialReasons.length > 0
      ? weightedKey(rng, { full_day: 78, half_day: 11, hourly: 11 })
      : 'full_day');
  const end = duration === 'full_day' ? addWorkdays(start, int(rng, ...spec.workdays)) : start;
  return { spec, typeId: ctx.ids.leaveType + index, duration, start, end, future };
}

/** About six leaves over the past year and sometimes one booked ahead, none overlapping. */
export function planLeaves(ctx: Context, employee: Employee, showcase: boolean): PlannedLeave[] {
  const { rng } = ctx;
  const pastCount = showcase ? 6 : int(rng, 4, 7);
  const futureCount = showcase || (employee.status === 'active' && chance(rng, 0.45)) ? 1 : 0;
  const planned: PlannedLeave[] = [];
  const used = new Set<string>();
  for (let i = 0; i < pastCount + futureCount; i++) {
    // The showcase employee gets one leave of each duration type, so every demo has all three.
    const forcedDuration = showcase ? DURATION_TYPES[i] : undefined;
    for (let attempt = 0; attempt < 8; attempt++) {
      const leave = drawLeave(ctx, employee, i >= pastCount, forcedDuration, used);
      if (leave === null) break;
      if (planned.some((p) => p.start <= leave.end && leave.start <= p.end)) continue;
      planned.push(leave);
      used.add(leave.spec.key);
      break;
    }
  }
  return planned.sort((a, b) => a.start - b.start);
}

/** The showcase employee's past leaves, oldest first; its booked-ahead leave is pending. */
const SHOWCASE_LEAVE_STATUSES: readonly LeaveStatus[] = ['approved', 'rejected', 'cancelled'];

export function leaveStatus(
  rng: Rng,
  leave: PlannedLeave,
  showcaseIndex: number | null,
): LeaveStatus {
  if (showcaseIndex !== null) {
    const forced = leave.future ? 'pending' : SHOWCASE_LEAVE_STATUSES[showcaseIndex];
    if (forced !== undefined) return forced;
  }
  return leave.future
    ? weightedKey(rng, { pending: 55, approved: 38, cancelled: 5, rejected: 2 })
    : weightedKey(rng, { approved: 80, rejected: 8, cancelled: 9, pending: 3 });
}

/** Active employees, overall and per department: who can stand in for someone on leave. */
export interface Staff {
  active: Employee[];
  byDepartment: Map<string, Employee[]>;
}

export function staffOf(employees: Employee[]): Staff {
  const active = employees.filter((e) => e.status === 'active');
  const byDepartment = new Map<string, Employee[]>();
  for (const employee of active) {
    const team = byDepartment.get(employee.department);
    if (team) team.push(employee);
    else byDepartment.set(employee.department, [employee]);
  }
  return { active, byDepartment };
}

/** A colleague from the same department covers a longer leave; anyone active in a team of one. */
function substituteFor(rng: Rng, employee: Employee, staff: Staff): number | null {
  const others = (list: Employee[]) => list.filter((e) => e.id !== employee.id);
  const team = others(staff.byDepartment.get(employee.department) ?? []);
  const pool = team.length > 0 ? team : others(staff.active);
  return pool.length > 0 ? pick(rng, pool).id : null;
}

function leaveDocument(ctx: Context, leave: PlannedLeave, status: LeaveStatus): DemoRecord | null {
  const { rng } = ctx;
  const file = leave.spec.documentFile;
  if (file === null || leave.duration !== 'full_day' || status === 'cancelled') return null;
  const deadline = leave.start + leave.spec.documentDays;
  const obligation =
    deadline < ctx.today
      ? weightedKey(rng, { accepted: 65, submitted: 20, pending: 15 })
      : weightedKey(rng, { pending: 60, submitted: 40 });
  return {
    deadline: isoDate(deadline),
    obligation_status: obligation,
    attachments: obligation === 'pending' ? [] : [{ file_name: file }],
  };
}

/** When a leave was requested and decided on; a decision always follows the request. */
export interface LeaveTimestamps {
  created: string;
  approved: string | null;
  /** The decision (approval, rejection or cancellation), else the request. */
  updated: string;
}

export function leaveTimestamps(
  rng: Rng,
  createdDay: Day,
  status: LeaveStatus,
  lastDay: Day,
): LeaveTimestamps {
  const createdAt = officeMoment(rng, createdDay);
  const approvedAt = status === 'approved' ? later(rng, createdAt, 0, 3, lastDay) : null;
  const decidedAt =
    status === 'rejected' || status === 'cancelled' ? later(rng, createdAt, 0, 10, lastDay) : null;
  return {
    created: timestamp(createdAt),
    approved: approvedAt === null ? null : timestamp(approvedAt),
    updated: timestamp(approvedAt ?? decidedAt ?? createdAt),
  };
}

/** How long a leave is: its workdays, half a day, or some hours with their clock times. */
export interface LeaveLength {
  days: number;
  startTime: string | null;
  endTime: string | null;
  hours: number | null;
}

export function leaveLength(rng: Rng, duration: DurationType, start: Day, end: Day): LeaveLength {
  if (duration === 'full_day') {
    return { days: workdaysBetween(start, end), startTime: null, endTime: null, hours: null };
  }
  if (duration === 'half_day') return { days: 0.5, startTime: null, endTime: null, hours: null };
  const startMinutes = int(rng, 16, 28) * 30; // 08:00 to 14:00
  const halfHours = int(rng, 2, 8);
  const hours = halfHours / 2;
  return {
    days: hours / 8, // an 8-hour working day; exact in binary for half hours
    startTime: clockTime(startMinutes),
    endTime: clockTime(startMinutes + halfHours * 30),
    hours,
  };
}

export function leaveRecord(
  ctx: Context,
  id: number,
  employee: Employee,
  leave: PlannedLeave,
  status: LeaveStatus,
  staff: Staff,
): DemoRecord {
  const { rng } = ctx;
  const partial = leave.duration !== 'full_day';
  // Sick leave is reported on the day (or the day after); everything else is booked ahead.
  const createdDay = clamp(
    leave.spec.bookedAhead ? leave.start - int(rng, 3, 40) : leave.start + int(rng, 0, 1),
    employee.hireDay,
    ctx.lastDay,
  );
  const times = leaveTimestamps(rng, createdDay, status, ctx.lastDay);
  const length = leaveLength(rng, leave.duration, leave.start, leave.end);
  const longEnough = leave.duration === 'full_day' && length.days >= 2;
  const wantsSubstitute = longEnough && status !== 'rejected' && chance(rng, 0.35);
  return {
    type: 'leave',
    company_id: ctx.companyId,
    id,
    employee_id: employee.id,
    leave_type_id: leave.typeId,
    status,
    start_date: isoDate(leave.start),
    end_date: isoDate(leave.end),
    days: length.days,
    duration_type: leave.duration,
    start_time: length.startTime,
    end_time: length.endTime,
    hours: length.hours,
    reason: chance(rng, 0.75)
      ? pick(rng, partial ? leave.spec.partialReasons : leave.spec.reasons)
      : null,
    rejection_reason: status === 'rejected' ? pick(rng, LEAVE_REJECTIONS) : null,
    substitute_employee_id: wantsSubstitute ? substituteFor(rng, employee, staff) : null,
    approved_at: times.approved,
    created_at: times.created,
    updated_at: times.updated,
    document: leaveDocument(ctx, leave, status),
  };
}
