import type { EXPENSE_STATUSES } from '../domain.ts';
import { type Day, isoDate, later, officeMoment, timestamp } from './calendar.ts';
import { type Context, type DemoRecord, formatCents, RETIRED_BEFORE_DAYS } from './context.ts';
import type { Employee } from './people.ts';
import { chance, int, list, pick, type Rng, sample, weighted, weightedKey } from './random.ts';

/**
 * Expense categories with their merchants, and each employee's expenses: amounts, items, VAT,
 * statuses and the timestamps of submission, approval and payment.
 */

type ExpenseStatus = (typeof EXPENSE_STATUSES)[number];
type Currency = 'TRY' | 'EUR';

/** A merchant and what its receipts list; `C` is the currencies the data set uses. */
export interface Merchant<C extends string = Currency> {
  name: string;
  currency: C;
  titles: readonly string[];
  items: readonly string[];
}

/** An expense category: its record's fields, and how often and how much it is spent on. */
export interface CategorySpec<C extends string = Currency> {
  name: string;
  description: string | null;
  requiresReceipt: boolean;
  /** Limit per expense in TRY, or null for none. Demo TRY amounts stay below it. */
  maxAmount: number | null;
  active: boolean;
  weight: number;
  /** Amount ranges in whole currency units. */
  range: Record<C, readonly [number, number]>;
  merchants: readonly Merchant<C>[];
}

/** A merchant in one line: titles and item names are `|`-separated lists. */
export function merchant<C extends string>(
  name: string,
  currency: C,
  titles: string,
  items: string,
): Merchant<C> {
  return { name, currency, titles: list(titles), items: list(items) };
}

/** Short, for the table below. */
const m = merchant;

/** The demo company's expense categories, in the order their ids are given. */
export const CATEGORIES: readonly CategorySpec[] = [
  {
    name: 'Travel',
    description: 'Flights, trains, taxis and parking on business trips.',
    requiresReceipt: true,
    maxAmount: 5000,
    active: true,
    weight: 30,
    range: { TRY: [150, 4800], EUR: [12, 140] },
    merchants: [
      m(
        'BiTaksi',
        'TRY',
        'Taxi to client meeting | Taxi to the airport',
        'Taxi fare | Bridge toll | Waiting time',
      ),
      m(
        'Türk Hava Yolları',
        'TRY',
        'Flight to the Ankara office | Flight to the İzmir fair',
        'Flight ticket | Extra baggage | Seat selection',
      ),
      m(
        'Pegasus Hava Yolları',
        'TRY',
        'Flight to the Antalya workshop',
        'Flight ticket | Extra baggage | Seat selection',
      ),
      m('İSPARK', 'TRY', 'Parking at customer site', 'Parking fee'),
      m(
        'Deutsche Bahn',
        'EUR',
        'Train Munich–Frankfurt | Train to the Berlin office',
        'ICE ticket | Seat reservation',
      ),
      m('SNCF Connect', 'EUR', 'TGV Paris–Lyon', 'TGV ticket | Seat reservation'),
      m('Renfe', 'EUR', 'AVE Madrid–Barcelona', 'AVE ticket | Seat reservation'),
      m('G7 Taxi', 'EUR', 'Taxi to client meeting in Paris', 'Taxi fare | Airport supplement'),
    ],
  },
  {
    name: 'Meals & Entertainment',
    description: 'Client meals and team events; list the attendees.',
    requiresReceipt: true,
    maxAmount: 1500,
    active: true,
    weight: 25,
    range: { TRY: [90, 1450], EUR: [8, 80] },
    merchants: [
      m('Köfteci Yusuf', 'TRY', 'Team lunch', 'Köfte menu | Ayran | Salad | Dessert'),
      m('Kahve Dünyası', 'TRY', 'Coffee with a candidate', 'Türk kahvesi | Latte | Cheesecake'),
      m('Hafız Mustafa 1864', 'TRY', 'Sweets for a client visit', 'Baklava box | Lokum box'),
      m('Çiya Sofrası', 'TRY', 'Client dinner', 'Starters | Kebab | Künefe | Drinks'),
      m('Café de Flore', 'EUR', 'Breakfast meeting', 'Café crème | Croissant | Omelette'),
      m(
        'Brauhaus Früh am Dom',
        'EUR',
        'Dinner at the Köln trade fair',
        'Kölsch | Schnitzel | Apfelstrudel',
      ),
      m('Casa Lucio', 'EUR', 'Client dinner in Madrid', 'Huevos rotos | Wine | Dessert'),
    ],
  },
  {
    name: 'Accommodation',
    description: null,
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 12,
    range: { TRY: [2200, 14500], EUR: [90, 420] },
    merchants: [
      m('Hilton İstanbul Bomonti', 'TRY', 'Hotel for the offsite', 'Room | Breakfast | City tax'),
      m('Divan Ankara', 'TRY', 'Hotel, Ankara office visit', 'Room | Breakfast | Parking'),
      m('Swissôtel Büyük Efes', 'TRY', 'Hotel, İzmir fair', 'Room | Breakfast | Minibar'),
      m('Motel One München', 'EUR', 'Hotel, Munich customer visit', 'Room | Breakfast | City tax'),
      m(
        'Hôtel Mercure Lyon Centre',
        'EUR',
        'Hotel, Lyon partner meeting',
        'Room | Breakfast | Taxe de séjour',
      ),
      m('NH Collection Madrid', 'EUR', 'Hotel, Madrid conference', 'Room | Breakfast'),
    ],
  },
  {
    name: 'Office Supplies',
    description: 'Small equipment and stationery under 10,000 TRY.',
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 12,
    range: { TRY: [60, 3200], EUR: [5, 90] },
    merchants: [
      m(
        'Teknosa',
        'TRY',
        'USB-C hub and cables | Wireless mouse',
        'USB-C hub | HDMI cable | Wireless mouse | Keyboard',
      ),
      m('D&R', 'TRY', 'Books for the team library', 'Book | Notebook | Pens'),
      m('Koçtaş', 'TRY', 'Office plants and hooks', 'Desk plant | Wall hooks | Extension cord'),
      m('Saturn', 'EUR', 'Headset for remote calls', 'Headset | Webcam | Batteries'),
      m('Fnac', 'EUR', 'Books for the team library', 'Book | Notebook'),
    ],
  },
  {
    name: 'Training & Conferences',
    description: 'Courses, certifications and conference tickets agreed with your manager.',
    requiresReceipt: true,
    maxAmount: null,
    active: true,
    weight: 6,
    range: { TRY: [450, 24000], EUR: [40, 900] },
    merchants: [
      m('Udemy', 'TRY', 'Online course', 'Course licence'),
      m(
        'Boğaziçi Üniversitesi BÜYEM',
        'TRY',
        'Certificate programme',
        'Tuition | Course materials',
      ),
      m('WeAreDevelopers', 'EUR', 'World Congress ticket', 'Conference ticket | Workshop'),
      m('Web Summit', 'EUR', 'Web Summit Lisbon', 'Conference pass'),
    ],
  },
  {
    name: 'Mobile & Internet',
    description: 'Work share of phone and home internet bills.',
    requiresReceipt: false,
    maxAmount: 750,
    active: true,
    weight: 10,
    range: { TRY: [180, 740], EUR: [10, 20] },
    merchants: [
      m('Turkcell', 'TRY', 'Mobile phone bill', 'Monthly plan | Roaming package'),
      m('Türk Telekom', 'TRY', 'Home internet for remote work', 'Fibre internet | Modem rental'),
      m('Deutsche Telekom', 'EUR', 'Roaming data package', 'Data package'),
      m('Orange', 'EUR', 'Local SIM on a business trip', 'Prepaid SIM | Data package'),
    ],
  },
  {
    // Retired when the company moved to fleet fuel cards: only old expenses use it.
    name: 'Fuel (retired)',
    description: 'Replaced by fleet fuel cards.',
    requiresReceipt: false,
    maxAmount: 3000,
    active: false,
    weight: 5,
    range: { TRY: [600, 2900], EUR: [40, 95] },
    merchants: [
      m('Opet', 'TRY', 'Fuel for customer visits', 'Fuel | Car wash'),
      m('Petrol Ofisi', 'TRY', 'Fuel for customer visits', 'Fuel | Windscreen fluid'),
      m('Aral', 'EUR', 'Fuel for the rental car', 'Fuel'),
    ],
  },
];

const EXPENSE_DESCRIPTIONS = [
  'Agreed in advance with my team lead.',
  'Customer visit, see the CRM notes.',
  'Shared with two colleagues from Sales.',
  'Card terminal printed no itemised slip.',
];

const EXPENSE_REJECTIONS = [
  'The receipt is missing or unreadable.',
  'Personal expense, not reimbursable.',
  'Duplicate of an earlier claim.',
  'Above the category limit without prior approval.',
  'Submitted more than 60 days after the expense date.',
];

/** The showcase employee's expenses, oldest first, cover every status. */
export const SHOWCASE_EXPENSE_STATUSES: readonly ExpenseStatus[] = [
  'paid',
  'rejected',
  'cancelled',
  'approved',
  'pending',
];

export interface PlannedExpense {
  category: CategorySpec;
  categoryId: number;
  day: Day;
}

/** A category as an importer record. */
export function categoryRecord(ctx: Context, id: number, spec: CategorySpec<string>): DemoRecord {
  return {
    type: 'expense_category',
    company_id: ctx.companyId,
    id,
    name: spec.name,
    description: spec.description,
    requires_receipt: spec.requiresReceipt,
    max_amount: spec.maxAmount === null ? null : formatCents(spec.maxAmount * 100),
    active: spec.active,
  };
}

export function categoryRecords(ctx: Context, firstId: number): DemoRecord[] {
  return CATEGORIES.map((spec, i) => categoryRecord(ctx, firstId + i, spec));
}

/** An active category that requires a receipt: any day of employment suits it. */
const RECEIPT_CATEGORY = CATEGORIES.find((c) => c.requiresReceipt && c.active) as CategorySpec;

export function planExpenses(
  ctx: Context,
  employee: Employee,
  showcase: boolean,
): PlannedExpense[] {
  const { rng } = ctx;
  const count = showcase ? 6 : int(rng, 3, 7);
  const planned: PlannedExpense[] = [];
  for (let i = 0; i < count; i++) {
    const index = weighted(
      rng,
      CATEGORIES.map((c, n) => [n, c.weight] as const),
    );
    const category = CATEGORIES[index];
    if (category === undefined) continue;
    const to = category.active
      ? employee.to
      : Math.min(employee.to, ctx.today - RETIRED_BEFORE_DAYS);
    if (employee.from > to) continue;
    const day = int(rng, employee.from, to);
    planned.push({ category, categoryId: ctx.ids.expenseCategory + index, day });
  }
  planned.sort((a, b) => a.day - b.day);
  const first = planned[0];
  if (showcase && first && !first.category.requiresReceipt) {
    // The company's first expense carries its first receipt, whatever day the demo is made on:
    // the README's receipt example asks for expense 1.
    first.category = RECEIPT_CATEGORY;
    first.categoryId = ctx.ids.expenseCategory + CATEGORIES.indexOf(RECEIPT_CATEGORY);
  }
  return planned;
}

export function expenseStatus(rng: Rng, ctx: Context, day: Day): ExpenseStatus {
  const age = ctx.today - day;
  if (age <= 14) {
    return weightedKey(rng, { pending: 55, approved: 25, paid: 5, rejected: 8, cancelled: 7 });
  }
  if (age <= 45) {
    return weightedKey(rng, { pending: 15, approved: 30, paid: 40, rejected: 8, cancelled: 7 });
  }
  return weightedKey(rng, { paid: 70, approved: 7, pending: 3, rejected: 12, cancelled: 8 });
}

/** Splits `total` cents into `parts` positive amounts that add up to it exactly. */
export function splitCents(rng: Rng, total: number, parts: number): number[] {
  const weights = Array.from({ length: parts }, () => 1 + rng() * 3);
  const sum = weights.reduce((a, b) => a + b, 0);
  const head = weights.slice(1).map((w) => Math.floor((total * w) / sum));
  return [total - head.reduce((a, b) => a + b, 0), ...head];
}

/** When an expense was created, submitted and decided on: each step follows the one before. */
export interface ExpenseTimestamps {
  created: string;
  submitted: string;
  /** Set once approved, so also for paid expenses. */
  approved: string | null;
  paid: string | null;
  /** The latest step: payment, approval, rejection or cancellation, else submission. */
  updated: string;
}

export function expenseTimestamps(
  rng: Rng,
  day: Day,
  status: ExpenseStatus,
  lastDay: Day,
): ExpenseTimestamps {
  const createdAt = officeMoment(rng, day);
  const submittedAt = later(rng, createdAt, 0, 6, lastDay);
  const approvedAt =
    status === 'approved' || status === 'paid' ? later(rng, submittedAt, 0, 4, lastDay) : null;
  const paidAt =
    status === 'paid' && approvedAt !== null ? later(rng, approvedAt, 1, 10, lastDay) : null;
  const decidedAt =
    status === 'rejected' || status === 'cancelled' ? later(rng, submittedAt, 0, 5, lastDay) : null;
  return {
    created: timestamp(createdAt),
    submitted: timestamp(submittedAt),
    approved: approvedAt === null ? null : timestamp(approvedAt),
    paid: paidAt === null ? null : timestamp(paidAt),
    updated: timestamp(paidAt ?? approvedAt ?? decidedAt ?? submittedAt),
  };
}

/** How an employee paid: most often by card. */
export function paymentMethod(rng: Rng): string {
  return weightedKey(rng, { corporate_card: 40, personal_card: 35, cash: 15, bank_transfer: 10 });
}

export function expenseRecord(
  ctx: Context,
  id: number,
  employee: Employee,
  expense: PlannedExpense,
  status: ExpenseStatus,
  receipt: string | null,
): DemoRecord {
  const { rng } = ctx;
  const currency: Currency = chance(rng, 0.15) ? 'EUR' : 'TRY';
  const merchant = pick(
    rng,
    expense.category.merchants.filter((x) => x.currency === currency),
  );
  const [min, max] = expense.category.range[currency];
  const amount = int(rng, min * 100, max * 100);
  const names = sample(rng, merchant.items, int(rng, 1, Math.min(4, merchant.items.length)));
  const prices = splitCents(rng, amount, names.length);
  // The receipt's 20% VAT is included in the amount: tax = amount × 20/120, in whole cents.
  const tax = Math.round(amount / 6);
  const times = expenseTimestamps(rng, expense.day, status, ctx.lastDay);
  return {
    type: 'expense',
    company_id: ctx.companyId,
    id,
    employee_id: employee.id,
    category_id: expense.categoryId,
    status,
    title: pick(rng, merchant.titles),
    description: chance(rng, 0.3) ? pick(rng, EXPENSE_DESCRIPTIONS) : null,
    amount: formatCents(amount),
    currency,
    tax_amount: formatCents(tax),
    expense_date: isoDate(expense.day),
    merchant_name: merchant.name,
    payment_method: paymentMethod(rng),
    approved_at: times.approved,
    paid_at: times.paid,
    rejected_reason: status === 'rejected' ? pick(rng, EXPENSE_REJECTIONS) : null,
    submitted_at: times.submitted,
    created_at: times.created,
    updated_at: times.updated,
    items: names.map((name, i) => ({ name, quantity: 1, price: formatCents(prices[i] ?? 0) })),
    receipt: receipt === null ? null : { original: receipt },
  };
}
