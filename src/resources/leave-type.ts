import type { NewLeaveType } from '../db/database.ts';
import { type FieldReader, flag } from './fields.ts';
import { recordType } from './record-type.ts';

function parseLeaveType(r: FieldReader): { row: NewLeaveType } {
  return {
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      name: r.text('name'),
      type_key: r.code('type_key'),
      description: r.optionalText('description'),
      max_days_per_year: r.integer('max_days_per_year', 0, 366),
      quota_type: r.code('quota_type'),
      requires_document: flag(r.boolean('requires_document')),
      affects_annual_balance: flag(r.boolean('affects_annual_balance')),
      active: flag(r.boolean('active')),
    },
  };
}

export const leaveType = recordType({
  type: 'leave_type',
  table: 'leave_types',
  noun: ['leave type', 'leave types'],
  embedded: ['name', 'type_key'],
  unserved: [],
  parents: [],
  children: [],
  receipt: false,
  list: null,
  parse: parseLeaveType,
});
