import { sql } from 'kysely';
import type { DatabaseHandle, Dialect } from './connect.ts';
import type { Db } from './database.ts';
import { type DatedRange, type Sample, sampleColumn } from './list-samples-count.ts';
import {
  type AnyDb,
  MONTH_STRIDE,
  monthOf,
  SAMPLE_INTERVAL,
  SAMPLED_MIN_ROWS,
  type SampledList,
} from './sampled-lists.ts';

/**
 * A company's list read into samples in every sort order, in one snapshot (`sampleList`), for
 * list-samples-refresh.ts to store; nothing here writes.
 */

interface GroupCount {
  status: string;
  grp: number;
  n: number | string;
}

/**
 * At most this many counts (kept samples × months × statuses, four bytes each: 4 MB) a sort
 * order keeps for one date column, read into the service's memory when a window asks: a company
 * whose dates span more months than that allows for its size (83 years of them for a million
 * rows of four statuses, 8 for ten million) has no month counts for that date, and its windows
 * are read as before.
 */
export const MONTH_COUNTS_MAX = 1_000_000;

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

/** A list's samples as read, or the version at which it was short. */
export type MadeSamples =
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
export async function sampleList(
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
  // Looked up for every row in every order: by status, then by group, with no key to build.
  const position = new Map<string, Map<number, number>>();
  groups.forEach(([status, grp], i) => {
    const ofStatus = position.get(status) ?? new Map<number, number>();
    position.set(status, ofStatus.set(grp, i));
  });
  const groupIndex = (status: string, grp: number) => position.get(status)?.get(grp) as number;
  const statuses = [...position.keys()];
  const statusPosition = new Map(statuses.map((status, s) => [status, s]));
  const statusIndex = (status: string) => statusPosition.get(status) as number;
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
