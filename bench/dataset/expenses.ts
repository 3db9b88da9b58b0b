import { isoDate, later, officeMoment, timestamp } from '../../src/demo/calendar.ts';
import {
  type Context,
  type DemoRecord,
  formatCents,
  RETIRED_BEFORE_DAYS,
} from '../../src/demo/context.ts';
import { expenseStatus } from '../../src/demo/expenses.ts';
import {
  chance,
  int,
  list,
  pick,
  type Rng,
  sample,
  weighted,
  weightedKey,
} from '../../src/demo/random.ts';
import { CATEGORIES, type CategorySpec, type Currency, type Merchant } from './categories.ts';
import type { BenchEmployee } from './employees.ts';
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

/** The company's categories, and which of them an expense on a day may have. */
export interface ExpenseCategories {
  records: DemoRecord[];
  all: readonly (readonly [Category, number])[];
  /** The retired category only appears on expenses from before it was retired. */
  current: readonly (readonly [Category, number])[];
  retiredFrom: number;
}

export function expenseCategories(ctx: Context): ExpenseCategories {
  const categories = CATEGORIES.map((spec, i) => ({
    id: ctx.ids.expenseCategory + i,
    spec,
    merchants: {
      TRY: spec.merchants.filter((x) => x.currency === 'TRY'),
      EUR: spec.merchants.filter((x) => x.currency === 'EUR'),
      USD: spec.merchants.filter((x) => x.currency === 'USD'),
    },
  }));
  const entry = (category: Category) => [category, category.spec.weight] as const;
  return {
    records: categories.map(({ id, spec }) => ({
      type: 'expense_category',
      company_id: ctx.companyId,
      id,
      name: spec.name,
      description: spec.description,
      requires_receipt: spec.requiresReceipt,
      max_amount: spec.maxAmount === null ? null : formatCents(spec.maxAmount * 100),
      active: spec.active,
    })),
    all: categories.map(entry),
    current: categories.filter((c) => c.spec.active).map(entry),
    retiredFrom: ctx.today - RETIRED_BEFORE_DAYS,
  };
}

/** Splits `total` cents into `parts` positive amounts that add up to it exactly. */
function splitCents(rng: Rng, total: number, parts: number): number[] {
  const weights = Array.from({ length: parts }, () => 1 + rng() * 3);
  const sum = weights.reduce((a, b) => a + b, 0);
  const head = weights.slice(1).map((w) => Math.floor((total * w) / sum));
  return [total - head.reduce((a, b) => a + b, 0), ...head];
}

function items(rng: Rng, merchant: Merchant, amount: number): DemoRecord[] {
  const names = sample(rng, merchant.items, int(rng, 1, Math.min(5, merchant.items.length)));
  const prices = splitCents(rng, amount, names.length);
  return names.map((name, i) => ({ name, quantity: 1, price: formatCents(prices[i] ?? 0) }));
}

export function* employeeExpenses(
  ctx: Context,
  categories: ExpenseCategories,
  employee: BenchEmployee,
  count: number,
  firstId: number,
): Generator<DemoRecord> {
  const { rng } = ctx;
  for (let i = 0; i < count; i++) {
    const [slotStart, slotEnd] = slot(employee.from, employee.to, i, count);
    const day = int(rng, slotStart, slotEnd);
    const category = weighted(
      rng,
      day < categories.retiredFrom ? categories.all : categories.current,
    );
    const currency = weightedKey<Currency>(rng, { TRY: 80, EUR: 13, USD: 7 });
    const merchant = pick(rng, category.merchants[currency]);
    const [min, max] = category.spec.range[currency];
    const amount = int(rng, min * 100, max * 100);
    const rate = TAX_RATE[currency];
    const status = expenseStatus(rng, ctx, day);
    const createdAt = officeMoment(rng, day);
    const submittedAt = later(rng, createdAt, 0, 6, ctx.lastDay);
    const approvedAt =
      status === 'approved' || status === 'paid'
        ? later(rng, submittedAt, 0, 4, ctx.lastDay)
        : null;
    const paidAt =
      status === 'paid' && approvedAt !== null ? later(rng, approvedAt, 1, 10, ctx.lastDay) : null;
    const decidedAt =
      status === 'rejected' || status === 'cancelled'
        ? later(rng, submittedAt, 0, 5, ctx.lastDay)
        : null;
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
      payment_method: weightedKey(rng, {
        corporate_card: 40,
        personal_card: 35,
        cash: 15,
        bank_transfer: 10,
      }),
      approved_at: approvedAt === null ? null : timestamp(approvedAt),
      paid_at: paidAt === null ? null : timestamp(paidAt),
      rejected_reason: status === 'rejected' ? pick(rng, EXPENSE_REJECTIONS) : null,
      submitted_at: timestamp(submittedAt),
      created_at: timestamp(createdAt),
      updated_at: timestamp(paidAt ?? approvedAt ?? decidedAt ?? submittedAt),
      items: items(rng, merchant, amount),
      receipt: null,
    };
  }
}
