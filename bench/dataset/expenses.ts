import { isoDate } from '../../src/demo/calendar.ts';
import { type Context, type DemoRecord, formatCents } from '../../src/demo/context.ts';
import {
  categoryRecord,
  expenseStatus,
  expenseTimestamps,
  paymentMethod,
  splitCents,
} from '../../src/demo/expenses.ts';
import { chance, int, list, pick, type Rng, sample, weightedKey } from '../../src/demo/random.ts';
import { CATEGORIES, type CategorySpec, type Currency, type Merchant } from './categories.ts';
import type { BenchEmployee } from './employees.ts';
import { type Kinds, kindsOf } from './kinds.ts';
import { slot } from './period.ts';

/**
 * Expenses: the company's categories, and for each employee a given number of expenses spread
 * over the days they worked, in TRY mostly, with items that add up to the amount. Statuses
 * follow the demo's (src/demo/expenses.ts): old claims are mostly paid, recent ones open.
 */

/** Sales tax included in the amount, in percent. */
const TAX_RATE: Record<Currency, number> = { TRY: 20, EUR: 19, USD: 8 };

const EXPENSE_DESCRIPTIONS = list(
  'Agreed in advance with my team lead. | Customer visit, see the CRM notes. | Shared with two colleagues from Sales. | Müşteri ziyareti, CRM notlarına bakınız.',
);

const EXPENSE_REJECTIONS = list(
  'The receipt is missing or unreadable. | Personal expense, not reimbursable. | Duplicate of an earlier claim. | Above the category limit without prior approval.',
);

interface Category {
  id: number;
  spec: CategorySpec;
  merchants: Record<Currency, readonly Merchant[]>;
}

/** The company's categories, with their merchants by currency. */
export function expenseCategories(ctx: Context): Kinds<Category> {
  const categories = CATEGORIES.map((spec, i) => ({
    id: ctx.ids.expenseCategory + i,
    spec,
    merchants: {
      TRY: spec.merchants.filter((x) => x.currency === 'TRY'),
      EUR: spec.merchants.filter((x) => x.currency === 'EUR'),
      USD: spec.merchants.filter((x) => x.currency === 'USD'),
    },
  }));
  const records = categories.map(({ id, spec }) => categoryRecord(ctx, id, spec));
  return kindsOf(ctx, records, categories);
}

function items(rng: Rng, merchant: Merchant, amount: number): DemoRecord[] {
  const names = sample(rng, merchant.items, int(rng, 1, Math.min(5, merchant.items.length)));
  const prices = splitCents(rng, amount, names.length);
  return names.map((name, i) => ({ name, quantity: 1, price: formatCents(prices[i] ?? 0) }));
}

export function* employeeExpenses(
  ctx: Context,
  categories: Kinds<Category>,
  employee: BenchEmployee,
  count: number,
  firstId: number,
): Generator<DemoRecord> {
  const { rng } = ctx;
  for (let i = 0; i < count; i++) {
    const [slotStart, slotEnd] = slot(employee.from, employee.to, i, count);
    const day = int(rng, slotStart, slotEnd);
    const category = categories.draw(rng, day);
    const currency = weightedKey<Currency>(rng, { TRY: 80, EUR: 13, USD: 7 });
    const merchant = pick(rng, category.merchants[currency]);
    const [min, max] = category.spec.range[currency];
    const amount = int(rng, min * 100, max * 100);
    const rate = TAX_RATE[currency];
    const status = expenseStatus(rng, ctx, day);
    const times = expenseTimestamps(rng, day, status, ctx.lastDay);
    yield {
      type: 'expense',
      company_id: ctx.companyId,
      id: firstId + i,
      employee_id: employee.id,
      category_id: category.id,
      status,
      title: pick(rng, merchant.titles),
      description: chance(rng, 0.25) ? pick(rng, EXPENSE_DESCRIPTIONS) : null,
      amount: formatCents(amount),
      currency,
      tax_amount: formatCents(Math.round((amount * rate) / (100 + rate))),
      expense_date: isoDate(day),
      merchant_name: merchant.name,
      payment_method: paymentMethod(rng),
      approved_at: times.approved,
      paid_at: times.paid,
      rejected_reason: status === 'rejected' ? pick(rng, EXPENSE_REJECTIONS) : null,
      submitted_at: times.submitted,
      created_at: times.created,
      updated_at: times.updated,
      items: items(rng, merchant, amount),
      receipt: null,
    };
  }
}
