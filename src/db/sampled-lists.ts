import type { Kysely } from 'kysely';

/**
 * Which lists have samples and how they are laid out. They are counted and made in
 * list-samples-count.ts and list-samples-make.ts, stored by list-samples-refresh.ts, read through
 * list-samples-load.ts and searched with list-samples-lookup.ts.
 */

/**
 * List samples: for each sort order of a company's long lists, every SAMPLE_INTERVAL-th row's
 * sort key, with how many rows of each status and group (leave type, expense category) come
 * up to it. Made for the new data version right after the commit of the import that changed
 * the list (`refreshListSamples`; until then the list is read as if it had none). With them a
 * page of any combination of statuses and groups, at any depth, starts from the sample just
 * before it and skips fewer than SAMPLE_INTERVAL rows; and the number of
 * rows below a date (so the total of a date window or of `updated_since`) is the sample's
 * count plus a count over fewer than SAMPLE_INTERVAL rows of the index. Without them a new
 * filter's first deep page walked and counted up to a million index entries (PostgreSQL
 * counted a status by reading the whole table: half a second).
 */
export const SAMPLE_INTERVAL = 1000;

/** Shorter lists have no samples: walking and counting them is cheap enough. */
export const SAMPLED_MIN_ROWS = 20_000;

/** A list with samples: its table, the group column beside status, and its sort columns. */
export interface SampledList {
  table: 'leaves' | 'expenses';
  /** The alias the list queries give the table. */
  alias: 'l' | 'x';
  group: 'leave_type_id' | 'category_id';
  /** Each with the index that reads it in order (migration 0005). */
  columns: Readonly<Record<string, string>>;
  /**
   * The date columns a window or `updated_since` filters on, whose months each other sort
   * order's samples count (see `MonthCounts`).
   */
  dated: readonly string[];
}

export const SAMPLED_LISTS = {
  leaves: {
    table: 'leaves',
    alias: 'l',
    group: 'leave_type_id',
    columns: {
      id: 'leaves_id_list',
      start_date: 'leaves_start_date_list',
      end_date: 'leaves_end_date_list',
      created_at: 'leaves_created_at_list',
      updated_at: 'leaves_updated_at_list',
    },
    dated: ['start_date', 'end_date', 'updated_at'],
  },
  expenses: {
    table: 'expenses',
    alias: 'x',
    group: 'category_id',
    columns: {
      id: 'expenses_id_list',
      expense_date: 'expenses_expense_date_list',
      amount_e4: 'expenses_amount_e4_list',
      created_at: 'expenses_created_at_list',
      updated_at: 'expenses_updated_at_list',
    },
    dated: ['expense_date', 'updated_at'],
  },
} as const satisfies Record<string, SampledList>;

export type SampledListName = keyof typeof SAMPLED_LISTS;

export const SAMPLED_LIST_NAMES = Object.keys(SAMPLED_LISTS) as SampledListName[];

/** The index that reads the list in the order of `column`. */
export const orderIndex = (list: SampledListName, column: string): string =>
  (SAMPLED_LISTS[list].columns as Record<string, string>)[column] as string;

// The tables and columns are named by the lists above, not by Kysely's table types.
// biome-ignore lint/suspicious/noExplicitAny: see above.
export type AnyDb = Kysely<any>;

/** What `monthOf` subtracts for the character codes of `0000` and `00` (48 is `0`). */
const ZERO_YEAR = 48 * 1111;
const ZERO_MONTH = 48 * 11;

/**
 * A month as `year × 12 + month − 1`, read from a stored date or timestamp (`YYYY-MM-…`; both
 * databases give timestamps back as UTC ISO strings). Read digit by digit: the samples of a
 * million-row list read three dates a row in each of five orders, and slicing and converting
 * took 0.7 s of the bench company's leaves' 4.5.
 */
export function monthOf(value: string): number {
  const year =
    value.charCodeAt(0) * 1000 +
    value.charCodeAt(1) * 100 +
    value.charCodeAt(2) * 10 +
    value.charCodeAt(3) -
    ZERO_YEAR;
  return year * 12 + value.charCodeAt(5) * 10 + value.charCodeAt(6) - ZERO_MONTH - 1;
}

/** The first day of a month (`monthOf`), as `YYYY-MM-DD`. */
export function monthStart(month: number): string {
  const year = Math.floor(month / 12);
  return `${String(year).padStart(4, '0')}-${String((month % 12) + 1).padStart(2, '0')}-01`;
}

/**
 * Month counts are kept at every MONTH_STRIDE-th sample (the 4th, 8th, …: every 4,000th row):
 * a window's page then starts from up to 4,000 rows before it rather than 1,000 (a walk of
 * under half a millisecond on SQLite), and the counts take a quarter of the memory (the bench
 * company's 20 orders and dates: 9.6 MB rather than 38).
 */
export const MONTH_STRIDE = 4;
