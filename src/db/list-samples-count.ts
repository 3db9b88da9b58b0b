import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { DatabaseHandle } from './connect.ts';
import {
  type AnyDb,
  MONTH_STRIDE,
  monthOf,
  SAMPLE_INTERVAL,
  type SampledList,
} from './sampled-lists.ts';

/**
 * One sort order of a company's list counted into samples (`sampleColumn`), as the import makes
 * them (see list-samples-make.ts): PostgreSQL numbers the rows in one query, SQLite walks them
 * block by block.
 */

/** A sample as it is made: its row's sort value and id, the rows of each group up to it. */
export interface Sample {
  value: unknown;
  id: number;
  counts: number[];
}

/** The months of one date column that a sort order's samples count. */
export interface DatedRange {
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
export async function sampleColumn(
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
 * The rows of a list in one order, block by block: SAMPLE_INTERVAL rows at a time (their
 * statuses, groups and dates, counted here, then the sort value and id that the last of them
 * ends on), one statement prepared once for the order on the import's own connection. Built
 * and compiled by Kysely for every block, the statements made the bench import's samples take
 * 8 s instead of 6; a second statement a block for its last row (read at an offset) cost 0.1 s
 * of the 0.6 an order takes.
 */
function sampleColumnByBlocks(sqlite: SqliteDatabase.Database, order: SampledOrder): SampledColumn {
  const { list, companyId, column, groupIndex, groups, statusIndex, statuses, dated } = order;
  const index = list.columns[column] as string;
  const key = column === 'id' ? 'id' : `${column}, id`;
  const selected = ['status', list.group, ...dated.map((d) => d.column), key].join(', ');
  // The names come from SAMPLED_LISTS, not from a request.
  const block = (start: string) =>
    sqlite
      .prepare<unknown[], unknown[]>(
        `select ${selected} from ${list.table} indexed by ${index}
        where company_id = ? ${start} order by ${key} limit ${SAMPLE_INTERVAL}`,
      )
      .raw();
  const first = block('');
  const next = block(column === 'id' ? 'and id > ?' : `and (${column}, id) > (?, ?)`);
  const samples: Sample[] = [];
  const running = new Array<number>(groups).fill(0);
  const runningMonths = dated.map((d) => new Int32Array(d.months * statuses));
  const months: Int32Array[][] = dated.map(() => []);
  let last: { value: unknown; id: number } | null = null;
  for (;;) {
    const parameters =
      last === null
        ? [companyId]
        : column === 'id'
          ? [companyId, last.id]
          : [companyId, last.value, last.id];
    const rows = (last ? next : first).all(parameters) as unknown[][];
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
    const lastRow = rows[rows.length - 1] as unknown[];
    const id = Number(lastRow[lastRow.length - 1]);
    last = { value: column === 'id' ? id : lastRow[lastRow.length - 2], id };
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
