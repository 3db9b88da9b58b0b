import type SqliteDatabase from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { chunks } from './chunks.ts';
import type { DatabaseHandle, Dialect } from './connect.ts';
import type { Db } from './database.ts';

/**
 * List samples: for each sort order of a company's long lists, every SAMPLE_INTERVAL-th row's
 * sort key, with how many rows of each status and group (leave type, expense category) come
 * up to it. Made by the import that changed the list, in its transaction, for the new data
 * version. With them a page of any combination of statuses and groups, at any depth, starts
 * from the sample just before it and skips fewer than SAMPLE_INTERVAL rows; and the number of
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
  },
} as const satisfies Record<string, SampledList>;

export type SampledListName = keyof typeof SAMPLED_LISTS;

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

/** One company's list in one sort order, and where each status and group counts. */
interface SampledOrder {
  list: SampledList;
  companyId: number;
  column: string;
  groupIndex: (status: string, group: number) => number;
  groups: number;
}

/**
 * One sort order's samples: every SAMPLE_INTERVAL-th row of the list in that order (ties by
 * id), with the rows of each group up to and including it. PostgreSQL reads them in one query,
 * SQLite block by block; both give the same samples (test/db/list-samples.test.ts).
 */
async function sampleColumn(
  db: AnyDb,
  handle: DatabaseHandle,
  order: SampledOrder,
): Promise<Sample[]> {
  return handle.dialect === 'postgres'
    ? sampleColumnAtOnce(db, order)
    : sampleColumnByBlocks(handle.sqlite, order);
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
  const orderBy = column === 'id' ? sql`id` : sql`${sql.ref(column)}, id`;
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
        row_number() over (order by ${orderBy}) as rn
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

/**
 * The rows of a list in one order, block by block: SAMPLE_INTERVAL rows at a time, two
 * statements a block (its counts by group, then its last row), prepared once for the order on
 * the import's own connection. Built and compiled by Kysely for every block, they made the
 * bench import's samples take 8 s instead of 6.
 */
function sampleColumnByBlocks(sqlite: SqliteDatabase.Database, order: SampledOrder): Sample[] {
  const { list, companyId, column, groupIndex, groups } = order;
  const index = list.columns[column] as string;
  const key = column === 'id' ? 'id' : `${column}, id`;
  // The names come from SAMPLED_LISTS, not from a request.
  const statements = (start: string) => {
    const rows = `from ${list.table} indexed by ${index}
      where company_id = ? ${start} order by ${key}`;
    const block = `select status, ${list.group} as grp ${rows} limit ${SAMPLE_INTERVAL}`;
    return {
      counts: sqlite.prepare<unknown[], GroupCount>(
        `select status, grp, count(*) as n from (${block}) group by status, grp`,
      ),
      last: sqlite.prepare<unknown[], { value: unknown; id: number }>(
        `select ${column} as value, id ${rows} limit 1 offset ${SAMPLE_INTERVAL - 1}`,
      ),
    };
  };
  const first = statements('');
  const next = statements(column === 'id' ? 'and id > ?' : `and (${column}, id) > (?, ?)`);
  const samples: Sample[] = [];
  const running = new Array<number>(groups).fill(0);
  let last: { value: unknown; id: number } | null = null;
  for (;;) {
    const { counts, last: lastRow } = last ? next : first;
    const parameters =
      last === null
        ? [companyId]
        : column === 'id'
          ? [companyId, last.id]
          : [companyId, last.value, last.id];
    const rows = counts.all(parameters);
    if (rows.reduce((sum, row) => sum + Number(row.n), 0) < SAMPLE_INTERVAL) break;
    for (const row of rows) {
      const g = groupIndex(row.status, Number(row.grp));
      running[g] = (running[g] as number) + Number(row.n);
    }
    const row = lastRow.get(parameters) as { value: unknown; id: number };
    last = { value: row.value, id: Number(row.id) };
    samples.push({ ...last, counts: [...running] });
  }
  return samples;
}

/**
 * Makes the samples of the companies' long lists again (and drops those of lists that became
 * short), for the data version each company has now. Runs in the import's transaction, after
 * its rows and its version bump.
 */
export async function refreshListSamples(
  trx: Db,
  handle: DatabaseHandle,
  companyIds: readonly number[],
): Promise<void> {
  const db = trx as unknown as AnyDb;
  for (const chunk of chunks(companyIds)) {
    for (const table of ['list_samples', 'list_sample_sets'] as const) {
      await trx.deleteFrom(table).where('company_id', 'in', chunk).execute();
    }
    for (const [name, list] of Object.entries(SAMPLED_LISTS) as [SampledListName, SampledList][]) {
      const long = await db
        .selectFrom(list.table)
        .select('company_id')
        .where('company_id', 'in', chunk)
        .groupBy('company_id')
        .having(sql`count(*)`, '>=', SAMPLED_MIN_ROWS)
        .execute();
      for (const { company_id: companyId } of long) {
        await sampleList(db, handle, name, list, Number(companyId));
      }
    }
  }
}

/** The samples of one company's list, in every sort order. */
async function sampleList(
  db: AnyDb,
  handle: DatabaseHandle,
  name: SampledListName,
  list: SampledList,
  companyId: number,
): Promise<void> {
  const { data_version: version } = await db
    .selectFrom('companies')
    .select('data_version')
    .where('id', '=', companyId)
    .executeTakeFirstOrThrow();
  const totals = (await db
    .selectFrom(list.table)
    .select(['status', `${list.group} as grp`, sql<number>`count(*)`.as('n')])
    .where('company_id', '=', companyId)
    .groupBy(['status', list.group])
    .orderBy('status')
    .orderBy(list.group)
    .execute()) as GroupCount[];
  const groups = totals.map((row) => [row.status, Number(row.grp)] as const);
  const longest = name === 'leaves' ? await longestLeaveDays(db, handle.dialect, companyId) : null;
  const position = new Map(groups.map(([status, grp], i) => [`${status}\u0000${grp}`, i]));
  const groupIndex = (status: string, grp: number) =>
    position.get(`${status}\u0000${grp}`) as number;
  await db
    .insertInto('list_sample_sets')
    .values({
      company_id: companyId,
      list: name,
      data_version: version,
      groups: JSON.stringify(groups),
      totals: JSON.stringify(totals.map((row) => Number(row.n))),
      longest_leave_days: longest,
    })
    .execute();
  for (const column of Object.keys(list.columns)) {
    const samples = await sampleColumn(db, handle, {
      list,
      companyId,
      column,
      groupIndex,
      groups: groups.length,
    });
    for (let start = 0; start < samples.length; start += 200) {
      await db
        .insertInto('list_samples')
        .values(
          samples.slice(start, start + 200).map((sample, i) => ({
            company_id: companyId,
            list: name,
            sort_column: column,
            seq: start + i,
            sort_value: JSON.stringify(sample.value),
            id: sample.id,
            counts: JSON.stringify(sample.counts),
          })),
        )
        .execute();
    }
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
  /** Status and group of each group index. */
  groups: ReadonlyArray<readonly [string, number]>;
  totals: number[];
  longestLeaveDays: number | null;
  columns: Map<string, Promise<ColumnSamples>>;
}

/** The company's samples of the list, when they were made for `version`; else null. */
export async function loadListSamples(
  db: Db,
  companyId: number,
  list: SampledListName,
  version: number,
): Promise<ListSamples | null> {
  const set = await db
    .selectFrom('list_sample_sets')
    .select(['data_version', 'groups', 'totals', 'longest_leave_days'])
    .where('company_id', '=', companyId)
    .where('list', '=', list)
    .executeTakeFirst();
  if (!set || Number(set.data_version) !== version) return null;
  return {
    groups: JSON.parse(set.groups),
    totals: JSON.parse(set.totals),
    longestLeaveDays: set.longest_leave_days === null ? null : Number(set.longest_leave_days),
    columns: new Map(),
  };
}

/** One column's samples of a loaded set (read once per set). */
export function columnSamples(
  db: Db,
  samples: ListSamples,
  companyId: number,
  list: SampledListName,
  column: string,
): Promise<ColumnSamples> {
  let loaded = samples.columns.get(column);
  if (!loaded) {
    loaded = (async () => {
      const rows = await db
        .selectFrom('list_samples')
        .select(['sort_value', 'id', 'counts'])
        .where('company_id', '=', companyId)
        .where('list', '=', list)
        .where('sort_column', '=', column)
        .orderBy('seq')
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
    })();
    samples.columns.set(column, loaded);
    loaded.catch(() => samples.columns.delete(column));
  }
  return loaded;
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
 * The last sample whose rank (rows of the kept groups up to it) is at most `position`, or -1:
 * a page at that position starts after it and skips `position - rank` rows.
 */
export function sampleBefore(
  column: ColumnSamples,
  groups: number,
  kept: readonly number[],
  position: number,
): number {
  let low = 0;
  let high = column.ids.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (rankAt(column, groups, kept, middle) <= position) {
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
