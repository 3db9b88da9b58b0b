import type { NewExpense } from '../db/database.ts';
import { SAMPLED_LISTS } from '../db/sampled-lists.ts';
import { EXPENSE_STATUSES } from '../domain.ts';
import { fold } from '../fold.ts';
import { currencyFractionDigits } from '../money.ts';
import { EXPENSE_SORT_FIELDS } from '../schemas/expenses.ts';
import type { FieldReader } from './fields.ts';
import { recordType } from './record-type.ts';

const MAX_ITEMS = 500;

export interface ItemInput {
  position: number;
  name: string;
  quantity: number;
  price_e4: number;
}

function parseExpense(r: FieldReader): {
  row: NewExpense;
  children: { expense_items: ItemInput[] };
  receiptPath: string | null;
} {
  const currency = r.currency('currency');
  const digits = currencyFractionDigits(currency);
  const title = r.text('title');
  const merchantName = r.text('merchant_name');
  const items = r.array('items', MAX_ITEMS).map((entry, position) => {
    const item = r.nested(`items[${position}]`, entry);
    return {
      position,
      name: item.text('name'),
      quantity: item.number('quantity', 0, 1_000_000),
      // A unit price (fuel per litre) may be finer than the currency: up to 4 places in any.
      price_e4: item.money('price'),
    };
  });
  const receiptPath = r.optionalNested('receipt')?.text('original', 1024) ?? null;
  return {
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_id: r.id('employee_id'),
      category_id: r.id('category_id'),
      status: r.oneOf('status', EXPENSE_STATUSES),
      title,
      description: r.optionalText('description'),
      amount_e4: r.money('amount', digits),
      currency,
      tax_amount_e4: r.money('tax_amount', digits),
      expense_date: r.date('expense_date'),
      merchant_name: merchantName,
      payment_method: r.code('payment_method'),
      approved_at: r.optionalTimestamp('approved_at'),
      paid_at: r.optionalTimestamp('paid_at'),
      rejected_reason: r.optionalText('rejected_reason'),
      submitted_at: r.timestamp('submitted_at'),
      created_at: r.timestamp('created_at'),
      updated_at: r.timestamp('updated_at'),
      title_folded: fold(title),
      merchant_folded: fold(merchantName),
    },
    children: { expense_items: items },
    receiptPath,
  };
}

export const expense = recordType({
  type: 'expense',
  table: 'expenses',
  noun: ['expense', 'expenses'],
  embedded: [],
  unserved: [],
  parents: [
    { field: 'employee_id', type: 'employee' },
    { field: 'category_id', type: 'expense_category' },
  ],
  children: [{ table: 'expense_items', parentColumn: 'expense_id' }],
  receipt: true,
  list: { sortFields: EXPENSE_SORT_FIELDS, sampled: SAMPLED_LISTS.expenses },
  parse: parseExpense,
});
