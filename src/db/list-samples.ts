import { endianness } from 'node:os';
import type SqliteDatabase from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { chunks } from './chunks.ts';
import { nextDataVersion } from './companies.queries.ts';
import type { DatabaseHandle, Dialect } from './connect.ts';
import type { Db } from './database.ts';

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
type AnyDb = Kysely<any>;

interface GroupCount {
  status: string;
  grp: number;
  n: number | string;
}

/** A sample as it is made: its row's sort value and id, the rows of each group up to it. */
interface Sample {
  value: unknown;
  id: number;
  counts: number[];
}

/**
 * A month as `year × 12 + month − 1`, read from a stored date or timestamp (`YYYY-MM-…`; both
 * databases give timestamps back as UTC ISO strings).
 */
export const monthOf = (value: string): number =>
  Number(value.slice(0, 4)) * 12 + Number(value.slice(5, 7)) - 1;

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

/**
 * At most this many counts (kept samples × months × statuses, four bytes each: 4 MB) a sort
 * order keeps for one date column, read into the service's memory when a window asks: a company
 * whose dates span more months than that allows for its size (83 years of them for a million
 * rows of four statuses, 8 for ten million) has no month counts for that date, and its windows
 * are read as before.
 */
export const MONTH_COUNTS_MAX = 1_000_000;

/** The months of one date column that a sort order's samples count. */
interface DatedRange {
  column: string;
  /** The first month counted (`monthOf`). */
  first: number;
  months: number;
}

/** One company's list in one sort order, and where each status and group counts. */
interface SampledOrder {
  list: SampledList;
  companyId: number;
  column: string;
  groupIndex: (status: string, group: number) => number;
  groups: number;
  statusIndex: (status: string) => number;
  statuses: number;
  /** The date columns whose months this order's samples count. */
  dated: readonly DatedRange[];
}

/** A sort order's samples, with the month counts of each of its dated columns. */
interface SampledColumn {
  samples: Sample[];
  /**
   * Per dated column, in the order's `dated` order: kept sample (every MONTH_STRIDE-th) × month
   * × status, the rows up to and including the sample dated in that month, of that status
   * (cumulative over samples).
   */
  months: Int32Array[];
}

/**
 * One sort order's samples: every SAMPLE_INTERVAL-th row of the list in that order (ties by
 * id), with the rows of each group up to and including it, and of each status per month of
 * each dated column. PostgreSQL reads them in one query (and one more a dated column), SQLite
 * block by block; both give the same samples (test/db/list-samples.test.ts).
 */
async function sampleColumn(
  db: AnyDb,
  handle: DatabaseHandle,
  order: SampledOrder,
): Promise<SampledColumn> {
  if (handle.dialect !== 'postgres') return sampleColumnByBlocks(handle.sqlite, order);
  const samples = await sampleColumnAtOnce(db, order);
  const months: Int32Array[] = [];
  for (const dated of order.dated) {
    months.push(await sampleMonthsAtOnce(db, order, dated, samples.length));
  }
  return { samples, months };
}

/**
 * The rows numbered in the order, counted per block of SAMPLE_INTERVAL and group, each block
 * with the sort value and id of its last row when it is full: one pass over the list, where
 * `sampleColumnByBlocks` sends two small queries a block (2,500 for a million rows, ~0.9 ms
 * each on PostgreSQL: 22 s for the bench company's ten orders). In the import's transaction
 * (no statistics, no visibility map yet) PostgreSQL reads the company's rows with a bitmap scan
 * and sorts them, ~1.1 s an order: 11 s for the ten. Forcing the index's order was slower (2.4
 * s an order: a heap fetch a row). SQLite answers the small queries in microseconds, and
 * numbered and grouped the rows slower than it walks the blocks (0.9–1.1 s an order against
 * ~0.7 s).
 */
async function sampleColumnAtOnce(db: AnyDb, order: SampledOrder): Promise<Sample[]> {
  const { list, companyId, column, groupIndex, groups } = order;
  const interval = sql.lit(SAMPLE_INTERVAL);
  const last = sql`rn % ${interval} = 0`;
  const { rows } = await sql<{
    block: number | string;
    status: string;
    grp: number | string;
    n: number | string;
    value: unknown;
    id: number | string | null;
  }>`
    select (rn - 1) / ${interval} as block, status, grp, count(*) as n,
      max(v) filter (where ${last}) as value, max(id) filter (where ${last}) as id
    from (
      select ${sql.ref(column)} as v, id, status, ${sql.ref(list.group)} as grp,
        row_number() over (order by ${orderByOf(column)}) as rn
      from ${sql.table(list.table)}
      where company_id = ${companyId}
    ) numbered
    group by 1, status, grp
    order by 1`.execute(db);
  const samples: Sample[] = [];
  const running = new Array<number>(groups).fill(0);
  let block: number | null = null;
  let key: { value: unknown; id: number } | null = null;
  // A block's sample once all its groups are counted; the last block, when short, has none.
  const close = () => {
    if (key) samples.push({ ...key, counts: [...running] });
    key = null;
  };
  for (const row of rows) {
    if (Number(row.block) !== block) {
      close();
      block = Number(row.block);
    }
    const g = groupIndex(row.status, Number(row.grp));
    running[g] = (running[g] as number) + Number(row.n);
    if (row.id !== null) key = { value: row.value, id: Number(row.id) };
  }
  close();
  return samples;
}

const orderByOf = (column: string) => (column === 'id' ? sql`id` : sql`${sql.ref(column)}, id`);

/**
 * The month counts of one dated column in one order on PostgreSQL: the rows numbered in the
 * order as `sampleColumnAtOnce` numbers them, counted per block, status and month (of the UTC
 * day, for a timestamp), for the first `samples` blocks (the full ones).
 */
async function sampleMonthsAtOnce(
  db: AnyDb,
  order: SampledOrder,
  dated: DatedRange,
  samples: number,
): Promise<Int32Array> {
  const { list, companyId, column, statusIndex, statuses } = order;
  const interval = sql.lit(SAMPLE_INTERVAL);
  const date = dated.column.endsWith('_at')
    ? sql`(${sql.ref(dated.column)} at time zone 'UTC')`
    : sql.ref(dated.column);
  const { rows } = await sql<{
    block: number | string;
    status: string;
    month: number | string;
    n: number | string;
  }>`
    select (rn - 1) / ${interval} as block, status, month, count(*) as n
    from (
      select status,
        cast(extract(year from ${date}) * 12 + extract(month from ${date}) - 1 as integer) as month,
        row_number() over (order by ${orderByOf(column)}) as rn
      from ${sql.table(list.table)}
      where company_id = ${companyId}
    ) numbered
    where rn <= ${samples * SAMPLE_INTERVAL}
    group by 1, status, month`.execute(db);
  const cells = dated.months * statuses;
  const kept = Math.floor(samples / MONTH_STRIDE);
  const counts = new Int32Array(kept * cells);
  for (const row of rows) {
    // A block counts toward the kept sample that ends its run of MONTH_STRIDE blocks.
    const i = Math.floor(Number(row.block) / MONTH_STRIDE);
    if (i >= kept) continue;
    const cell =
      i * cells + monthCell(dated, Number(row.month), statuses) + statusIndex(row.status);
    counts[cell] = (counts[cell] as number) + Number(row.n);
  }
  // Each kept sample's counts, made cumulative over the ones before it.
  for (let i = cells; i < counts.length; i++) {
    counts[i] = (counts[i] as number) + (counts[i - cells] as number);
  }
  return counts;
}

/** Where a month's counts start within one sample's (months × statuses). */
function monthCell(dated: DatedRange, month: number, statuses: number): number {
  const m = month - dated.first;
  // The range was read in the same snapshot as the rows.
  if (!(m >= 0 && m < dated.months)) throw new Error(`${dated.column}: month ${month} outside`);
  return m * statuses;
}

/**
 * The rows of a list in one order, block by block: SAMPLE_INTERVAL rows at a time, two
 * statements a block (its rows' statuses, groups and dates, counted here, then its last row),
 * prepared once for the order on the import's own connection. Built and compiled by Kysely for
 * every block, they made the bench import's samples take 8 s instead of 6.
 */
function sampleColumnByBlocks(sqlite: SqliteDatabase.Database, order: SampledOrder): SampledColumn {
  const { list, companyId, column, groupIndex, groups, statusIndex, statuses, dated } = order;
  const index = list.columns[column] as string;
  const key = column === 'id' ? 'id' : `${column}, id`;
  const selected = ['status', list.group, ...dated.map((d) => d.column)].join(', ');
  // The names come from SAMPLED_LISTS, not from a request.
  const statements = (start: string) => {
    const rows = `from ${list.table} indexed by ${index}
      where company_id = ? ${start} order by ${key}`;
    return {
      block: sqlite
        .prepare<unknown[], unknown[]>(`select ${selected} ${rows} limit ${SAMPLE_INTERVAL}`)
        .raw(),
      last: sqlite.prepare<unknown[], { value: unknown; id: number }>(
        `select ${column} as value, id ${rows} limit 1 offset ${SAMPLE_INTERVAL - 1}`,
      ),
    };
  };
  const first = statements('');
  const next = statements(column === 'id' ? 'and id > ?' : `and (${column}, id) > (?, ?)`);
  const samples: Sample[] = [];
  const running = new Array<number>(groups).fill(0);
  const runningMonths = dated.map((d) => new Int32Array(d.months * statuses));
  const months: Int32Array[][] = dated.map(() => []);
  let last: { value: unknown; id: number } | null = null;
  for (;;) {
    const { block, last: lastRow } = last ? next : first;
    const parameters =
      last === null
        ? [companyId]
        : column === 'id'
          ? [companyId, last.id]
          : [companyId, last.value, last.id];
    const rows = block.all(parameters) as unknown[][];
    if (rows.length < SAMPLE_INTERVAL) break;
    for (const row of rows) {
      const status = row[0] as string;
      const g = groupIndex(status, Number(row[1]));
      running[g] = (running[g] as number) + 1;
      const s = statusIndex(status);
      for (let k = 0; k < dated.length; k++) {
        const counts = runningMonths[k] as Int32Array;
        const cell = monthCell(dated[k] as DatedRange, monthOf(row[2 + k] as string), statuses) + s;
        counts[cell] = (counts[cell] as number) + 1;
      }
    }
    const row = lastRow.get(parameters) as { value: unknown; id: number };
    last = { value: row.value, id: Number(row.id) };
    samples.push({ ...last, counts: [...running] });
    if (samples.length % MONTH_STRIDE === 0) {
      runningMonths.forEach((counts, k) => {
        (months[k] as Int32Array[]).push(counts.slice());
      });
    }
  }
  return { samples, months: months.map(concatenated) };
}

function concatenated(parts: readonly Int32Array[]): Int32Array {
  const all = new Int32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

/** Month counts made cumulative over months too: each then counts the rows up to its month. */
function cumulatedOverMonths(counts: Int32Array, months: number, statuses: number): Int32Array {
  const cells = months * statuses;
  for (let sample = 0; sample < counts.length; sample += cells) {
    for (let i = sample + statuses; i < sample + cells; i++) {
      counts[i] = (counts[i] as number) + (counts[i - statuses] as number);
    }
  }
  return counts;
}

/**
 * The version of a set whose samples are being made (after the commit of the import that
 * changed the list): no company has it, so a reader sees the set as behind the data and keeps
 * nothing of what it read without samples (see `loadListSamples`).
 */
const BEING_MADE = -1;

/**
 * In the import's transaction, before the companies' versions move on (`nextDataVersion` at
 * `at`): the sets of the lists the import changed are marked as being made (their samples are
 * made after the commit, `refreshListSamples`), and those of companies whose own row alone
 * changed move to the new version as they are (the same `nextDataVersion`, at the same `at`).
 */
export async function markListSamples(
  trx: Db,
  changed: readonly number[],
  stale: readonly number[],
  at: number,
): Promise<void> {
  const remade = new Set(changed);
  for (const chunk of chunks(stale.filter((companyId) => !remade.has(companyId)))) {
    await trx
      .updateTable('list_sample_sets')
      .set({ data_version: nextDataVersion(at) })
      .where('company_id', 'in', chunk)
      .where('data_version', '=', (eb) =>
        eb
          .selectFrom('companies')
          .select('companies.data_version')
          .whereRef('companies.id', '=', 'list_sample_sets.company_id'),
      )
      .execute();
  }
  for (const chunk of chunks(changed)) {
    await trx.deleteFrom('list_samples').where('company_id', 'in', chunk).execute();
    await trx.deleteFrom('list_sample_months').where('company_id', 'in', chunk).execute();
    await trx
      .insertInto('list_sample_sets')
      .values(
        chunk.flatMap((companyId) =>
          SAMPLED_LIST_NAMES.map((list) => ({
            company_id: companyId,
            list,
            data_version: BEING_MADE,
            groups: '[]',
            totals: '[]',
            longest_leave_days: null,
          })),
        ),
      )
      .onConflict((oc) =>
        oc.columns(['company_id', 'list']).doUpdateSet({
          data_version: BEING_MADE,
          groups: '[]',
          totals: '[]',
          longest_leave_days: null,
        }),
      )
      .execute();
  }
}

/**
 * After an import's commit: makes the samples of every set of the lists `names` (every sampled
 * list unless told) behind its company's data version
 * (those the import marked, and any that an import whose process ended between its commit and
 * its samples left behind), and of every set made before migration 0013 (no month counts), for
 * the version the company has now; those last are replaced as a whole while the old ones are
 * read meanwhile. The sets of lists that are short now go, in one statement a list. Each long
 * list is read in a transaction of its own (a snapshot: the samples, the totals and the version
 * agree) and its samples are written in a short one, only if the company still has that
 * version: an import that changed it since marked it again and samples it itself. No write lock
 * is held while a list is read (the large bench company's two lists: ~9 s on SQLite).
 */
export async function refreshListSamples(
  handle: DatabaseHandle,
  names: readonly SampledListName[] = SAMPLED_LIST_NAMES,
): Promise<void> {
  const { db } = handle;
  for (const name of names) {
    const list: SampledList = SAMPLED_LISTS[name];
    const rows = sql<number>`(select count(*) from (
        select 1 from ${sql.table(list.table)} t where t.company_id = list_sample_sets.company_id
        limit ${sql.lit(SAMPLED_MIN_ROWS)}) counted)`;
    await db.transaction().execute(async (trx) => {
      // A write first: SQLite takes the write lock before it reads.
      const dropped = await trx
        .deleteFrom('list_sample_sets')
        .where('list', '=', name)
        .where(behindItsCompany)
        .where(rows, '<', SAMPLED_MIN_ROWS)
        .returning('company_id')
        .execute();
      for (const chunk of chunks(dropped.map((row) => row.company_id))) {
        for (const table of ['list_samples', 'list_sample_months'] as const) {
          await trx
            .deleteFrom(table)
            .where('list', '=', name)
            .where('company_id', 'in', chunk)
            .execute();
        }
      }
    });
    const behind = await db
      .selectFrom('list_sample_sets')
      .select('company_id')
      .where('list', '=', name)
      .where((eb) => eb.or([behindItsCompany, eb.not(eb.exists(monthsOfSet))]))
      .orderBy('company_id')
      .execute();
    for (const { company_id: companyId } of behind) {
      const made = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => sampleList(trx as unknown as AnyDb, handle, list, Number(companyId)));
      if (made) await storeSamples(db, name, Number(companyId), made);
    }
  }
}

/** A set's month counts: none when it was made before migration 0013. */
const monthsOfSet = sql<number>`(select 1 from list_sample_months m
  where m.company_id = list_sample_sets.company_id and m.list = list_sample_sets.list)`;

/** A set made for another version than its company's. */
const behindItsCompany = sql<boolean>`data_version <> (select c.data_version from companies c
  where c.id = list_sample_sets.company_id)`;

/** A list's samples as read, or the version at which it was short. */
type MadeSamples =
  | { version: number; short: true }
  | {
      version: number;
      short: false;
      groups: Array<readonly [string, number]>;
      totals: number[];
      longest: number | null;
      columns: Map<string, Sample[]>;
      statuses: string[];
      /** Per sort column, its month counts of each dated column. */
      months: Map<string, MonthCountsMade[]>;
    };

/** One sort order's month counts of one date column, as `storeSamples` writes them. */
interface MonthCountsMade extends DatedRange {
  counts: Int32Array;
}

/** The samples of one company's list in every sort order, read in one snapshot. */
async function sampleList(
  db: AnyDb,
  handle: DatabaseHandle,
  list: SampledList,
  companyId: number,
): Promise<MadeSamples | null> {
  const company = await db
    .selectFrom('companies')
    .select('data_version')
    .where('id', '=', companyId)
    .executeTakeFirst();
  // A company purged since has nothing to sample.
  if (!company) return null;
  const version = company.data_version;
  const totals = (await db
    .selectFrom(list.table)
    .select(['status', `${list.group} as grp`, sql<number>`count(*)`.as('n')])
    .where('company_id', '=', companyId)
    .groupBy(['status', list.group])
    .orderBy('status')
    .orderBy(list.group)
    .execute()) as GroupCount[];
  const rows = totals.reduce((sum, row) => sum + Number(row.n), 0);
  if (rows < SAMPLED_MIN_ROWS) return { version: Number(version), short: true };
  const groups = totals.map((row) => [row.status, Number(row.grp)] as const);
  const longest =
    list.table === 'leaves' ? await longestLeaveDays(db, handle.dialect, companyId) : null;
  const position = new Map(groups.map(([status, grp], i) => [`${status}\u0000${grp}`, i]));
  const groupIndex = (status: string, grp: number) =>
    position.get(`${status}\u0000${grp}`) as number;
  const statuses = [...new Set(groups.map(([status]) => status))];
  const statusIndex = (status: string) => statuses.indexOf(status);
  const cellsPerMonth = Math.floor(rows / SAMPLE_INTERVAL / MONTH_STRIDE) * statuses.length;
  const ranges = await datedRanges(db, list, companyId, cellsPerMonth);
  const columns = new Map<string, Sample[]>();
  const months = new Map<string, MonthCountsMade[]>();
  for (const column of Object.keys(list.columns)) {
    // A sort order by a date column needs no month counts of its own dates (see `MonthCounts`).
    const dated = ranges.filter((range) => range.column !== column);
    const order = {
      ...{ list, companyId, column, groupIndex, groups: groups.length },
      ...{ statusIndex, statuses: statuses.length, dated },
    };
    const sampled = await sampleColumn(db, handle, order);
    columns.set(column, sampled.samples);
    const counted = dated.map((range, k) => ({
      ...range,
      counts: cumulatedOverMonths(sampled.months[k] as Int32Array, range.months, statuses.length),
    }));
    // A date with too many months is stored as counted over none, so the set has a row for
    // each of its dates and is not taken for one made before migration 0013.
    const uncounted = list.dated
      .filter((date) => date !== column && !dated.some((range) => range.column === date))
      .map((date) => ({ column: date, first: 0, months: 0, counts: new Int32Array(0) }));
    months.set(column, [...counted, ...uncounted]);
  }
  const counts = totals.map((row) => Number(row.n));
  return {
    ...{ version: Number(version), short: false as const, groups, totals: counts, longest },
    ...{ columns, statuses, months },
  };
}

/**
 * The months from the earliest to the latest of each of the list's date columns, read from the
 * ends of their indexes, without those whose counts (`cellsPerMonth` a month: samples ×
 * statuses) would pass MONTH_COUNTS_MAX.
 */
async function datedRanges(
  db: AnyDb,
  list: SampledList,
  companyId: number,
  cellsPerMonth: number,
): Promise<DatedRange[]> {
  const ranges: DatedRange[] = [];
  for (const column of list.dated) {
    const end = (direction: 'asc' | 'desc') =>
      db
        .selectFrom(list.table)
        .select(sql.ref(column).as('value'))
        .where('company_id', '=', companyId)
        .orderBy(sql.ref(column), direction)
        .limit(1)
        .executeTakeFirstOrThrow() as Promise<{ value: string }>;
    const first = monthOf((await end('asc')).value);
    const months = monthOf((await end('desc')).value) - first + 1;
    if (months * cellsPerMonth <= MONTH_COUNTS_MAX) ranges.push({ column, first, months });
  }
  return ranges;
}

/**
 * Replaces the company's set of the list with `made`, in one short transaction, if the company
 * still has the version it was read at. Its first statement writes, so SQLite takes the write
 * lock before it reads the version (a deferred read first could not write after another
 * connection's commit).
 */
async function storeSamples(
  db: Db,
  name: SampledListName,
  companyId: number,
  made: MadeSamples,
): Promise<void> {
  const superseded = new Error('superseded');
  try {
    await db.transaction().execute(async (trx) => {
      for (const table of ['list_samples', 'list_sample_months', 'list_sample_sets'] as const) {
        await trx
          .deleteFrom(table)
          .where('company_id', '=', companyId)
          .where('list', '=', name)
          .execute();
      }
      const company = await trx
        .selectFrom('companies')
        .select('data_version')
        .where('id', '=', companyId)
        .executeTakeFirst();
      if (Number(company?.data_version) !== made.version) throw superseded;
      if (made.short) return;
      await trx
        .insertInto('list_sample_sets')
        .values({
          company_id: companyId,
          list: name,
          data_version: made.version,
          groups: JSON.stringify(made.groups),
          totals: JSON.stringify(made.totals),
          longest_leave_days: made.longest,
        })
        .execute();
      for (const [column, samples] of made.columns) {
        for (const chunk of chunks(samples.map((sample, seq) => ({ sample, seq })))) {
          await trx
            .insertInto('list_samples')
            .values(
              chunk.map(({ sample, seq }) => ({
                company_id: companyId,
                list: name,
                sort_column: column,
                seq,
                sort_value: JSON.stringify(sample.value),
                id: sample.id,
                counts: JSON.stringify(sample.counts),
              })),
            )
            .execute();
        }
      }
      for (const [column, dated] of made.months) {
        for (const { column: dateColumn, first, months, counts } of dated) {
          await trx
            .insertInto('list_sample_months')
            .values({
              company_id: companyId,
              list: name,
              sort_column: column,
              date_column: dateColumn,
              first_month: first,
              months,
              statuses: JSON.stringify(made.statuses),
              counts: littleEndianBytes(counts),
            })
            .execute();
        }
      }
    });
  } catch (error) {
    if (error !== superseded) throw error;
  }
}

/** The company's longest leave, in whole days from its start date to its end date. */
export async function longestLeaveDays(
  db: Db | AnyDb,
  dialect: Dialect,
  companyId: number,
): Promise<number> {
  const span =
    dialect === 'postgres'
      ? sql<number | null>`max(end_date - start_date)`
      : sql<number | null>`max(julianday(end_date) - julianday(start_date))`;
  const row = await (db as AnyDb)
    .selectFrom('leaves')
    .select(span.as('days'))
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return Math.ceil(Number(row?.days ?? 0));
}

/** One sort order's samples, in order. */
export interface ColumnSamples {
  values: unknown[];
  ids: number[];
  /** Row-major: sample × group, each the rows of that group up to and including the sample. */
  counts: Int32Array;
}

/** A company's samples of one list at one data version. */
export interface ListSamples {
  /** The data version they were made for. */
  version: number;
  /** Status and group of each group index. */
  groups: ReadonlyArray<readonly [string, number]>;
  totals: number[];
  longestLeaveDays: number | null;
  columns: Map<string, Promise<ColumnSamples>>;
  /** By sort column and date column (see `monthCounts`). */
  months: Map<string, Promise<MonthCounts | null>>;
}

/**
 * One sort order's month counts of one date column: for every MONTH_STRIDE-th of the order's
 * samples, the rows up to and including it dated in each month or before it, of each status.
 * With them the rows of a date window (or of `updated_since`) up to any sample, of any statuses,
 * are a few sums,
 * and a page of the window in that order starts from the sample before it as a page of
 * statuses does; the rows of the window's edge months before or after its own dates are read
 * from the date's index and subtracted or added (see `windowRanks` in pagination.ts).
 */
export interface MonthCounts {
  /** The first month counted (`monthOf`), and how many. */
  first: number;
  months: number;
  statuses: readonly string[];
  /** Kept sample × month × status, cumulative over samples and months. */
  counts: Int32Array;
}

/** Counts as little-endian bytes, as list_sample_months stores them. */
function littleEndianBytes(counts: Int32Array): Uint8Array {
  if (endianness() === 'LE')
    return new Uint8Array(counts.buffer, counts.byteOffset, counts.byteLength);
  const bytes = new Uint8Array(counts.length * 4);
  const view = new DataView(bytes.buffer);
  counts.forEach((count, i) => {
    view.setInt32(i * 4, count, true);
  });
  return bytes;
}

/**
 * Stored little-endian bytes as counts: a copy, as a driver's Buffer may be a view into a
 * shared pool at an unaligned offset (whose `slice` is no copy).
 */
function countsOfBytes(bytes: Uint8Array): Int32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (endianness() === 'LE') return new Int32Array(new Uint8Array(bytes).buffer);
  return Int32Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getInt32(i * 4, true));
}

/** What `loadListSamples` finds while an import's samples of the list are being made. */
export const SAMPLES_BEING_MADE = 'being made';

/** What `loadListSamples` finds. */
export type LoadedSamples = ListSamples | null | typeof SAMPLES_BEING_MADE;

/**
 * The company's samples of the list at `version`; null when the list has none (it is short);
 * SAMPLES_BEING_MADE when its set is behind `version` (the import that made the version has
 * committed and is making them): the list is read without samples meanwhile, and a cache
 * must not keep that answer for the version.
 */
export async function loadListSamples(
  db: Db,
  companyId: number,
  list: SampledListName,
  version: number,
): Promise<LoadedSamples> {
  const set = await db
    .selectFrom('list_sample_sets')
    .select(['data_version', 'groups', 'totals', 'longest_leave_days'])
    .where('company_id', '=', companyId)
    .where('list', '=', list)
    .executeTakeFirst();
  if (!set) return null;
  if (Number(set.data_version) !== version) return SAMPLES_BEING_MADE;
  return {
    version,
    groups: JSON.parse(set.groups),
    totals: JSON.parse(set.totals),
    longestLeaveDays: set.longest_leave_days === null ? null : Number(set.longest_leave_days),
    columns: new Map(),
    months: new Map(),
  };
}

/**
 * The rows of `table` of the company's list while its set is still at `samples.version`: none
 * once an import has replaced them for a newer version (a request that loaded the set before
 * that import's commit and reads a sort order's samples after it gets none, never another
 * version's).
 */
function ofSet(
  db: Db,
  table: 'list_samples' | 'list_sample_months',
  samples: ListSamples,
  companyId: number,
  list: SampledListName,
) {
  return db
    .selectFrom(table)
    .innerJoin('list_sample_sets as set', (join) =>
      join
        .onRef('set.company_id', '=', `${table}.company_id`)
        .onRef('set.list', '=', `${table}.list`),
    )
    .where(`${table}.company_id`, '=', companyId)
    .where(`${table}.list`, '=', list)
    .where('set.data_version', '=', samples.version);
}

/**
 * What `load` reads of a loaded set, read once per set under `key`: asked again while it is being
 * read, the same promise; when reading it failed (database down), read again next time.
 */
function readOncePerSet<T>(
  read: Map<string, Promise<T>>,
  key: string,
  load: () => Promise<T>,
): Promise<T> {
  let loaded = read.get(key);
  if (!loaded) {
    loaded = load();
    read.set(key, loaded);
    loaded.catch(() => read.delete(key));
  }
  return loaded;
}

/** One column's samples of a loaded set (read once per set). */
export function columnSamples(
  db: Db,
  samples: ListSamples,
  companyId: number,
  list: SampledListName,
  column: string,
): Promise<ColumnSamples> {
  return readOncePerSet(samples.columns, column, async () => {
    const rows = await ofSet(db, 'list_samples', samples, companyId, list)
      .select(['list_samples.sort_value', 'list_samples.id', 'list_samples.counts'])
      .where('list_samples.sort_column', '=', column)
      .orderBy('list_samples.seq')
      .execute();
    const groups = samples.groups.length;
    const counts = new Int32Array(rows.length * groups);
    rows.forEach((row, i) => {
      counts.set(JSON.parse(row.counts), i * groups);
    });
    return {
      values: rows.map((row) => JSON.parse(row.sort_value)),
      ids: rows.map((row) => Number(row.id)),
      counts,
    };
  });
}

/**
 * One sort order's month counts of a date column, read once per set; null when the set has
 * none (made before migration 0013, or too many months to count).
 */
export function monthCounts(
  db: Db,
  samples: ListSamples,
  companyId: number,
  list: SampledListName,
  sortColumn: string,
  dateColumn: string,
): Promise<MonthCounts | null> {
  return readOncePerSet(samples.months, `${sortColumn}\u0000${dateColumn}`, async () => {
    const row = await ofSet(db, 'list_sample_months', samples, companyId, list)
      .select([
        'list_sample_months.first_month',
        'list_sample_months.months',
        'list_sample_months.statuses',
        'list_sample_months.counts',
      ])
      .where('list_sample_months.sort_column', '=', sortColumn)
      .where('list_sample_months.date_column', '=', dateColumn)
      .executeTakeFirst();
    if (!row || Number(row.months) === 0) return null;
    return {
      first: Number(row.first_month),
      months: Number(row.months),
      statuses: JSON.parse(row.statuses),
      counts: countsOfBytes(row.counts),
    };
  });
}

/** The group indexes a filter of statuses and groups keeps (none given: all). */
export function keptGroups(
  samples: ListSamples,
  statuses: readonly string[] | undefined,
  groups: readonly number[] | undefined,
): number[] {
  const kept: number[] = [];
  samples.groups.forEach(([status, grp], i) => {
    if ((!statuses || statuses.includes(status)) && (!groups || groups.includes(grp))) kept.push(i);
  });
  return kept;
}

/** The rows of the kept groups up to and including sample `j`. */
export function rankAt(column: ColumnSamples, groups: number, kept: readonly number[], j: number) {
  let sum = 0;
  for (const g of kept) sum += column.counts[j * groups + g] as number;
  return sum;
}

/**
 * The last of `count` samples whose rank (the matches up to and including it, rising with the
 * sample) is at most `position`, or -1: a page at that position starts after it and skips
 * `position - rank` rows.
 */
export function sampleBefore(
  count: number,
  rank: (sample: number) => number,
  position: number,
): number {
  let low = 0;
  let high = count - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (rank(middle) <= position) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/**
 * The last sample whose sort value is below `value` (at most `value` when `inclusive`), or -1:
 * every row up to it is below too, and the rows between it and the next sample decide the rest.
 */
export function sampleBelow(column: ColumnSamples, value: unknown, inclusive: boolean): number {
  let low = 0;
  let high = column.values.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const sample = column.values[middle] as string | number;
    const below = inclusive
      ? sample <= (value as typeof sample)
      : sample < (value as typeof sample);
    if (below) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}
