import type { NewExpenseCategory } from '../db/database.ts';
import { type FieldReader, flag } from './fields.ts';
import { recordType } from './record-type.ts';

function parseExpenseCategory(r: FieldReader): { row: NewExpenseCategory } {
  return {
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      name: r.text('name'),
      description: r.optionalText('description'),
      requires_receipt: flag(r.boolean('requires_receipt')),
      max_amount_e4: r.optionalMoney('max_amount'),
      active: flag(r.boolean('active')),
    },
  };
}

export const expenseCategory = recordType({
  type: 'expense_category',
  table: 'expense_categories',
  noun: ['expense category', 'expense categories'],
  embedded: ['name'],
  unserved: [],
  parents: [],
  children: [],
  receipt: false,
  list: null,
  parse: parseExpenseCategory,
});
