import type { RecordOf, Resource } from '../types.ts';

/**
 * The fields of `T` as written, checked against its type: a field the list leaves out does not
 * compile (`missing` names it), nor does one `T` does not have.
 */
const everyField =
  <T>() =>
  <const F extends readonly (keyof T & string)[]>(
    fields: F &
      ([Exclude<keyof T, F[number]>] extends [never]
        ? unknown
        : { missing: Exclude<keyof T, F[number]> }),
  ): readonly string[] =>
    fields;

/**
 * Every field of each resource's record, in the order the API serves them: the columns its
 * table is made with, so a table (and its CSV file) shows the record's fields before the
 * company has any such record. The types are generated from the API's document, so a field it
 * adds or drops fails to compile here until the list follows; a column the file does not have
 * yet is still added when a record brings it (a newer service than the package).
 */
export const COLUMNS: { [R in Resource]: readonly string[] } = {
  employee: everyField<RecordOf['employee']>()([
    'id',
    'employee_number',
    'full_name',
    'email',
    'department',
    'position',
    'status',
    'hire_date',
    'updated_at',
  ]),
  leave_type: everyField<RecordOf['leave_type']>()([
    'id',
    'name',
    'type_key',
    'description',
    'max_days_per_year',
    'quota_type',
    'requires_document',
    'affects_annual_balance',
  ]),
  leave: everyField<RecordOf['leave']>()([
    'id',
    'status',
    'employee',
    'leave_type',
    'start_date',
    'end_date',
    'days',
    'duration_type',
    'start_time',
    'end_time',
    'hours',
    'reason',
    'rejection_reason',
    'substitute_employee',
    'approved_at',
    'created_at',
    'updated_at',
    'document',
  ]),
  expense_category: everyField<RecordOf['expense_category']>()([
    'id',
    'name',
    'description',
    'requires_receipt',
    'max_amount',
  ]),
  expense: everyField<RecordOf['expense']>()([
    'id',
    'status',
    'title',
    'description',
    'amount',
    'currency',
    'tax_amount',
    'expense_date',
    'merchant_name',
    'payment_method',
    'category',
    'employee',
    'has_receipt',
    'receipt_url',
    'approved_at',
    'paid_at',
    'rejected_reason',
    'submitted_at',
    'created_at',
    'updated_at',
    'items',
    'receipt',
  ]),
};
