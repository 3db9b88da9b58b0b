import { openDatabase } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { parseDatabaseUrl } from '../../src/db/database-url.ts';
import { mulberry32, pick } from '../../src/demo/random.ts';
import { fold } from '../../src/fold.ts';

export const LARGE_COMPANY_ID = 1;
export const SMALL_COMPANY_ID = 2;
const PREFIX_LENGTH = 4;
/** Enough distinct ids that a response cache cannot serve the by-id scenario from memory. */
const EXPENSE_ID_POOL_SIZE = 100_000;
const EXPENSE_ID_SEED = 20_260_101;

/** What the scenarios' query strings are made of; picked from the data, the same every run. */
export interface ScenarioParameters {
  /** The most common last name of the large company, folded as search folds it. */
  surname: string;
  surnamePrefix: string;
  merchantPrefix: string;
  /** The calendar quarter holding the large company's median leave start date. */
  quarter: { from: string; to: string };
  /** The large company's most used expense category. */
  categoryId: number;
  /** Expense ids of the large company, drawn with replacement by a seeded PRNG. */
  expenseIds: number[];
}

interface Counted<T> {
  value: T;
  count: number | string | bigint;
}

/**
 * Highest count first, ties by value in code-point order. Sorted here rather than in SQL so
 * both engines pick the same value whatever PostgreSQL's collation is.
 */
function mostCommon<T extends string | number>(rows: Counted<T>[], what: string): T {
  const sorted = rows
    .map((row) => ({ value: row.value, count: Number(row.count) }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const first = sorted[0];
  if (first === undefined) throw new Error(`company ${LARGE_COMPANY_ID} has no ${what}`);
  return first.value;
}

function surnameCounts(db: Db) {
  return db
    .selectFrom('employees')
    .select((eb) => [eb.ref('last_name').as('value'), eb.fn.countAll<number>().as('count')])
    .where('company_id', '=', LARGE_COMPANY_ID)
    .groupBy('last_name')
    .execute();
}

function merchantCounts(db: Db) {
  return db
    .selectFrom('expenses')
    .select((eb) => [eb.ref('merchant_name').as('value'), eb.fn.countAll<number>().as('count')])
    .where('company_id', '=', LARGE_COMPANY_ID)
    .groupBy('merchant_name')
    .execute();
}

function categoryCounts(db: Db) {
  return db
    .selectFrom('expenses')
    .select((eb) => [eb.ref('category_id').as('value'), eb.fn.countAll<number>().as('count')])
    .where('company_id', '=', LARGE_COMPANY_ID)
    .groupBy('category_id')
    .execute();
}

async function medianLeaveStart(db: Db): Promise<string> {
  const { count } = await db
    .selectFrom('leaves')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('company_id', '=', LARGE_COMPANY_ID)
    .executeTakeFirstOrThrow();
  const row = await db
    .selectFrom('leaves')
    .select('start_date')
    .where('company_id', '=', LARGE_COMPANY_ID)
    .orderBy('start_date')
    .orderBy('id')
    .offset(Math.floor(Number(count) / 2))
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) throw new Error(`company ${LARGE_COMPANY_ID} has no leaves`);
  return row.start_date;
}

function quarterOf(date: string): { from: string; to: string } {
  const year = Number(date.slice(0, 4));
  const firstMonth = Math.floor((Number(date.slice(5, 7)) - 1) / 3) * 3; // 0-based
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    from: iso(new Date(Date.UTC(year, firstMonth, 1))),
    // Day 0 of the month after the quarter is the quarter's last day.
    to: iso(new Date(Date.UTC(year, firstMonth + 3, 0))),
  };
}

async function expenseIdPool(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('expenses')
    .select('id')
    .where('company_id', '=', LARGE_COMPANY_ID)
    .orderBy('id')
    .execute();
  if (rows.length === 0) throw new Error(`company ${LARGE_COMPANY_ID} has no expenses`);
  const ids = rows.map((row) => row.id);
  const rng = mulberry32(EXPENSE_ID_SEED);
  return Array.from({ length: EXPENSE_ID_POOL_SIZE }, () => pick(rng, ids));
}

export async function pickParameters(databaseUrl: string): Promise<ScenarioParameters> {
  const handle = openDatabase(parseDatabaseUrl(databaseUrl));
  try {
    const { db } = handle;
    const surname = fold(mostCommon(await surnameCounts(db), 'employees'));
    return {
      surname,
      surnamePrefix: surname.slice(0, PREFIX_LENGTH),
      merchantPrefix: fold(mostCommon(await merchantCounts(db), 'expenses')).slice(
        0,
        PREFIX_LENGTH,
      ),
      quarter: quarterOf(await medianLeaveStart(db)),
      categoryId: mostCommon(await categoryCounts(db), 'expenses'),
      expenseIds: await expenseIdPool(db),
    };
  } finally {
    await handle.close();
  }
}
