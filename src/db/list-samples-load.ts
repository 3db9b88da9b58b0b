import { endianness } from 'node:os';
import type { Db } from './database.ts';
import type { SampledListName } from './sampled-lists.ts';

/**
 * A company's list samples as a request reads them: the set of one list at one data version
 * (`loadListSamples`), then each sort order's samples and month counts once they are asked for.
 */

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
 * from the date's index and subtracted or added (see `windowRanks` in window-ranks.ts).
 */
export interface MonthCounts {
  /** The first month counted (`monthOf`), and how many. */
  first: number;
  months: number;
  statuses: readonly string[];
  /** Kept sample × month × status, cumulative over samples and months. */
  counts: Int32Array;
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
