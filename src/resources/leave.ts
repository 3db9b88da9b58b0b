import type { NewLeave } from '../db/database.ts';
import { SAMPLED_LISTS } from '../db/sampled-lists.ts';
import { DURATION_TYPES, LEAVE_STATUSES } from '../domain.ts';
import { LEAVE_SORT_FIELDS } from '../schemas/leaves.ts';
import type { FieldReader } from './fields.ts';
import { recordType } from './record-type.ts';

const MAX_ATTACHMENTS = 100;

function parseLeave(r: FieldReader): {
  row: NewLeave;
  children: { leave_attachments: Array<{ file_name: string }> };
} {
  const startDate = r.date('start_date');
  const endDate = r.date('end_date');
  if (endDate < startDate) throw r.fail('end_date', 'must not be before start_date');
  const durationType = r.oneOf('duration_type', DURATION_TYPES);
  let startTime: string | null = null;
  let endTime: string | null = null;
  let hours: number | null = null;
  if (durationType === 'hourly') {
    startTime = r.time('start_time');
    endTime = r.time('end_time');
    if (endTime <= startTime) throw r.fail('end_time', 'must be after start_time');
    hours = r.number('hours', 0, 24);
  } else {
    for (const field of ['start_time', 'end_time', 'hours']) {
      r.mustBeNull(field, 'must be null unless duration_type is hourly');
    }
  }
  const doc = r.optionalNested('document');
  const attachments = doc
    ? doc.array('attachments', MAX_ATTACHMENTS).map((entry, i) => ({
        file_name: doc.nested(`attachments[${i}]`, entry).text('file_name'),
      }))
    : [];
  return {
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_id: r.id('employee_id'),
      leave_type_id: r.id('leave_type_id'),
      status: r.oneOf('status', LEAVE_STATUSES),
      start_date: startDate,
      end_date: endDate,
      days: r.number('days', 0, 366),
      duration_type: durationType,
      start_time: startTime,
      end_time: endTime,
      hours,
      reason: r.optionalText('reason'),
      rejection_reason: r.optionalText('rejection_reason'),
      substitute_employee_id: r.optionalId('substitute_employee_id'),
      approved_at: r.optionalTimestamp('approved_at'),
      created_at: r.timestamp('created_at'),
      updated_at: r.timestamp('updated_at'),
      document_deadline: doc?.optionalDate('deadline') ?? null,
      document_obligation_status: doc?.optionalCode('obligation_status') ?? null,
    },
    children: { leave_attachments: attachments },
  };
}

export const leave = recordType({
  type: 'leave',
  table: 'leaves',
  noun: ['leave', 'leaves'],
  embedded: [],
  unserved: [],
  parents: [
    { field: 'employee_id', type: 'employee' },
    { field: 'leave_type_id', type: 'leave_type' },
    { field: 'substitute_employee_id', type: 'employee' },
  ],
  children: [{ table: 'leave_attachments', parentColumn: 'leave_id' }],
  receipt: false,
  list: { sortFields: LEAVE_SORT_FIELDS, sampled: SAMPLED_LISTS.leaves },
  parse: parseLeave,
});
