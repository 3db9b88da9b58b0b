import { type Static, Type } from 'typebox';
import { DURATION_TYPES, LEAVE_STATUSES } from '../domain.ts';
import {
  DateRangeParams,
  DateString,
  EmployeeSummarySchema,
  IdListParam,
  model,
  NullableString,
  NullableTimestamp,
  PageParam,
  PerPageParam,
  ref,
  SearchParam,
  SortParam,
  StatusListParam,
  Timestamp,
  UpdatedSinceParam,
} from './common.ts';

export const LEAVE_SORT_FIELDS = [
  'id',
  'start_date',
  'end_date',
  'created_at',
  'updated_at',
] as const;

const ClockTime = Type.Union([
  Type.String({
    pattern: '^\\d{2}:\\d{2}$',
    description: '`hourly` leaves only.',
    examples: ['09:00'],
  }),
  Type.Null(),
]);

const leaveProperties = {
  id: Type.Integer(),
  status: Type.Enum([...LEAVE_STATUSES], { type: 'string' }),
  employee: ref(EmployeeSummarySchema),
  leave_type: Type.Object(
    { id: Type.Integer(), name: Type.String(), type_key: Type.String() },
    { description: 'The leave type, embedded even when it is no longer active.' },
  ),
  start_date: DateString,
  end_date: DateString,
  days: Type.Number({ examples: [2.5] }),
  duration_type: Type.Enum([...DURATION_TYPES], { type: 'string' }),
  start_time: ClockTime,
  end_time: ClockTime,
  hours: Type.Union([Type.Number({ description: '`hourly` leaves only.' }), Type.Null()]),
  reason: NullableString,
  rejection_reason: NullableString,
  substitute_employee: Type.Union([ref(EmployeeSummarySchema), Type.Null()]),
  approved_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const LeaveSchema = model(
  'Leave',
  Type.Object(leaveProperties, { description: 'A leave request, as lists show it.' }),
);
export type Leave = Static<typeof LeaveSchema>;

export const LeaveDocumentSchema = Type.Object(
  {
    deadline: Type.Union([DateString, Type.Null()]),
    obligation_status: NullableString,
    has_attachments: Type.Boolean({ description: 'Presence only: the files are never returned.' }),
  },
  { description: 'Document obligation of the leave; medical files themselves are never shared.' },
);

export const LeaveDetailSchema = model(
  'LeaveDetail',
  Type.Object(
    { ...leaveProperties, document: LeaveDocumentSchema },
    { description: 'A leave request with its document obligation.' },
  ),
);
export type LeaveDetail = Static<typeof LeaveDetailSchema>;

export const LeaveListQuery = Type.Object({
  status: Type.Optional(StatusListParam(LEAVE_STATUSES)),
  employee_id: Type.Optional(IdListParam('employee')),
  leave_type_id: Type.Optional(IdListParam('leave type')),
  ...DateRangeParams(
    'Leaves whose period reaches this date or later (end_date ≥ from).',
    'Leaves whose period starts on or before this date (start_date ≤ to).',
  ),
  search: Type.Optional(SearchParam('Matches the employee’s name or personnel number.')),
  updated_since: Type.Optional(UpdatedSinceParam),
  sort: Type.Optional(SortParam(LEAVE_SORT_FIELDS)),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});
export type LeaveListQuery = Static<typeof LeaveListQuery>;

export const LeaveTypeSchema = model(
  'LeaveType',
  Type.Object(
    {
      id: Type.Integer(),
      name: Type.String(),
      type_key: Type.String({ examples: ['annual'] }),
      description: NullableString,
      max_days_per_year: Type.Integer(),
      quota_type: Type.String(),
      requires_document: Type.Boolean(),
      affects_annual_balance: Type.Boolean(),
    },
    { description: 'An active leave type of the company.' },
  ),
);
export type LeaveType = Static<typeof LeaveTypeSchema>;
