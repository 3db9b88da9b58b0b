import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { parseDatabaseUrl } from '../../src/db/database-url.ts';
import { mulberry32, sample } from '../../src/demo/random.ts';
import { LARGE_COMPANY_ID, SMALL_COMPANY_ID } from '../harness/parameters.ts';

/** Ids to draw from: a dense range (the bench data's ids run on) or, failing that, the list. */
export type IdPool = { min: number; max: number } | { ids: number[] };

/** What the request mix needs to know of one company's data to ask for things that exist. */
export interface CompanyData {
  id: number;
  employees: IdPool;
  employeeCount: number;
  leaves: IdPool;
  leaveCount: number;
  expenses: IdPool;
  expenseCount: number;
  leaveTypeIds: number[];
  categoryIds: number[];
  /** Last names as stored (accents and all): search terms. */
  surnames: string[];
  merchants: string[];
  /** The span of leave and expense dates, for date-range filters. */
  firstDate: string;
  lastDate: string;
  /** The latest `updated_at` of its leaves and expenses: incremental syncs ask for what followed. */
  lastUpdatedAt: string;
  /** Expenses with a receipt image. */
  receiptExpenseIds: number[];
}

/** Distinct names kept per company: plenty for varied searches. */
const NAMES_KEPT = 200;

type IdTable = 'employees' | 'leaves' | 'expenses';

async function idPool(db: Db, table: IdTable, companyId: number) {
  const row = await db
    .selectFrom(table)
    .select((eb) => [
      eb.fn.min<number>('id').as('min'),
      eb.fn.max<number>('id').as('max'),
      eb.fn.countAll<number>().as('count'),
    ])
    .where('company_id', '=', companyId)
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  const [min, max] = [Number(row.min), Number(row.max)];
  if (count === 0) throw new Error(`company ${companyId} has no ${table}`);
  if (max - min + 1 === count) return { pool: { min, max }, count };
  const rows = await db
    .selectFrom(table)
    .select('id')
    .where('company_id', '=', companyId)
    .orderBy('id')
    .execute();
  return { pool: { ids: rows.map((r) => r.id) }, count };
}

interface DateSpan {
  first: string;
  last: string;
  lastUpdatedAt: string;
}

/** Each dated table's first and last date columns. */
const DATE_COLUMNS = [
  ['leaves', 'start_date', 'end_date'],
  ['expenses', 'expense_date', 'expense_date'],
] as const;

async function dateSpan(db: Db, companyId: number): Promise<DateSpan> {
  const spans = await Promise.all(
    DATE_COLUMNS.map(([table, firstColumn, lastColumn]) =>
      db
        .selectFrom(table as 'leaves')
        .select([
          sql<string | null>`min(${sql.ref(firstColumn)})`.as('first'),
          sql<string | null>`max(${sql.ref(lastColumn)})`.as('last'),
          sql<string | null>`max(updated_at)`.as('updated'),
        ])
        .where('company_id', '=', companyId)
        .executeTakeFirstOrThrow(),
    ),
  );
  const sorted = (values: (string | null)[]) =>
    values.filter((value): value is string => value !== null).sort();
  const dates = sorted(spans.flatMap((span) => [span.first, span.last]));
  const [first, last] = [dates[0], dates.at(-1)];
  const lastUpdatedAt = sorted(spans.map((span) => span.updated)).at(-1);
  if (first === undefined || last === undefined || lastUpdatedAt === undefined) {
    throw new Error(`company ${companyId} has no leaves or expenses`);
  }
  return { first, last, lastUpdatedAt };
}

type CompanyTable = 'employees' | 'expenses' | 'leave_types' | 'expense_categories' | 'receipts';

/** The distinct values of a column among the company's rows, in order (the first `limit`). */
async function distinctValues<T>(
  db: Db,
  table: CompanyTable,
  column: string,
  companyId: number,
  limit?: number,
): Promise<T[]> {
  let query = db
    .selectFrom(table as 'employees')
    .select(sql.ref<T>(column).as('value'))
    .distinct()
    .where('company_id', '=', companyId)
    .orderBy('value');
  if (limit !== undefined) query = query.limit(limit);
  return (await query.execute()).map((row) => row.value as T);
}

async function readCompany(db: Db, companyId: number): Promise<CompanyData> {
  const employees = await idPool(db, 'employees', companyId);
  const leaves = await idPool(db, 'leaves', companyId);
  const expenses = await idPool(db, 'expenses', companyId);
  const values = <T>(table: CompanyTable, column: string, limit?: number) =>
    distinctValues<T>(db, table, column, companyId, limit);
  const { first, last, lastUpdatedAt } = await dateSpan(db, companyId);
  return {
    id: companyId,
    employees: employees.pool,
    employeeCount: employees.count,
    leaves: leaves.pool,
    leaveCount: leaves.count,
    expenses: expenses.pool,
    expenseCount: expenses.count,
    leaveTypeIds: await values<number>('leave_types', 'id'),
    categoryIds: await values<number>('expense_categories', 'id'),
    surnames: await values<string>('employees', 'last_name', NAMES_KEPT),
    merchants: await values<string>('expenses', 'merchant_name', NAMES_KEPT),
    firstDate: first,
    lastDate: last,
    lastUpdatedAt,
    receiptExpenseIds: await values<number>('receipts', 'expense_id'),
  };
}

/** Whether any company has a receipt image (the bench data has none; the demo company has). */
export async function hasReceipts(databaseUrl: string): Promise<boolean> {
  const handle = openDatabase(parseDatabaseUrl(databaseUrl));
  try {
    const row = await handle.db.selectFrom('receipts').select('expense_id').limit(1).execute();
    return row.length > 0;
  } finally {
    await handle.close();
  }
}

/**
 * The companies of the mix: the large one, SMALL_COMPANY_ID (the bench's small company) and
 * `smallCount - 1` others drawn with `seed`, plus every company with receipts, so receipt
 * calls have something to fetch.
 */
export async function readCatalog(
  databaseUrl: string,
  smallCount: number,
  seed: number,
): Promise<CompanyData[]> {
  const handle = openDatabase(parseDatabaseUrl(databaseUrl));
  try {
    const { db } = handle;
    const all = await db.selectFrom('companies').select('id').where('active', '=', 1).execute();
    const others = all
      .map((r) => r.id)
      .filter((id) => id !== LARGE_COMPANY_ID && id !== SMALL_COMPANY_ID)
      .sort((a, b) => a - b);
    const withReceipts = await db.selectFrom('receipts').select('company_id').distinct().execute();
    const chosen = new Set([
      LARGE_COMPANY_ID,
      SMALL_COMPANY_ID,
      ...sample(mulberry32(seed), others, smallCount - 1),
      ...withReceipts.map((r) => r.company_id),
    ]);
    const companies: CompanyData[] = [];
    for (const id of [...chosen].sort((a, b) => a - b)) companies.push(await readCompany(db, id));
    return companies;
  } finally {
    await handle.close();
  }
}
