import { type Kysely, sql } from 'kysely';
import { DAY_MS } from '../time.ts';
import { cachedCount } from './derived-cache.ts';
import { indexedBy } from './index-hints.ts';
import {
  type AnyQuery,
  countedPage,
  fromMatched,
  type Gathering,
  gatheredPage,
  type RankedSamples,
  sampledPage,
  walkedPage,
} from './list-pages.ts';
import {
  type ColumnSamples,
  columnSamples,
  type ListSamples,
  loadListSamples,
  type MonthCounts,
  monthCounts,
  SAMPLES_BEING_MADE,
} from './list-samples-load.ts';
import { keptGroups, rankAt, sampleBelow } from './list-samples-lookup.ts';
import {
  type Anchor,
  type ListOrder,
  type ListSource,
  offsetOf,
  type PageRequest,
  type SortBounds,
} from './list-source.ts';
import {
  MONTH_STRIDE,
  monthOf,
  monthStart,
  orderIndex,
  SAMPLE_INTERVAL,
  SAMPLED_LISTS,
  type SampledListName,
} from './sampled-lists.ts';
import { isPostgres } from './search.ts';

export interface PaginationMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  from: number | null;
  to: number | null;
}

export interface Page<T> {
  data: T[];
  meta: PaginationMeta;
}

/** Meta for a page: `from`/`to` are 1-based positions, null on an empty page; last_page ≥ 1. */
export function pageOf<T>(data: T[], total: number, request: PageRequest): Page<T> {
  const first = offsetOf(request) + 1;
  return {
    data,
    meta: {
      current_page: request.page,
      per_page: request.perPage,
      total,
      last_page: Math.max(1, Math.ceil(total / request.perPage)),
      from: data.length > 0 ? first : null,
      to: data.length > 0 ? first + data.length - 1 : null,
    },
  };
}

/**
 * Rows of a sampled column below a value (at most the value when `inclusive`), added to or
 * taken from a sampled total.
 */
export interface SampledTerm {
  sign: 1 | -1;
  column: string;
  value: string;
  inclusive: boolean;
}

/** Filters that a list's samples can count, and perhaps place pages of. */
export interface SampledFilter {
  statuses?: readonly string[];
  groups?: readonly number[];
  /** The company's rows of those statuses and groups, with no other filter. */
  kept: AnyQuery;
  /**
   * The total: every kept row when `whole`, plus or minus the kept rows below each term's value
   * (a leave intersects [from, to] when it starts by `to` and does not end before `from`).
   */
  whole: boolean;
  terms: SampledTerm[];
}

/**
 * What reading a list costs, in index entries passed by a walk that reads the index alone
 * (SQLite, the bench data): gathering a match through the filters' own index and sorting it
 * costs 7 (a quarter of leaves, 30,603 matches, gathered and sorted by id in 16–18 ms; a walk
 * in id order past 400,000 entries to the middle of it, 27–32 ms); a walk that tests each
 * row's texts costs 64 an entry (a table look-up: 4.8 µs against 0.075); gathering a search's
 * matches through the trigram index costs 25 a match (43,916 in 83 ms), through its texts'
 * own indexes no more than through a filter's (104,740 in 25 ms).
 */
const GATHER_COST = 7;
const TESTED_ROW_COST = 64;
const SEARCH_GATHER_COST = 25;

/**
 * On PostgreSQL a walk's index entry costs five times SQLite's and a gathered match about the
 * same, so gathering costs 2 there: a year of leaves, 73,867 matches, gathered and sorted by id
 * in 54 ms, against 160 ms for a walk in id order past 423,000 entries (42 anchors made) to page
 * 852 of it.
 */
const POSTGRES_GATHER_COST = 2;

/**
 * How many samples of the sort column a walk that tests each row goes at most before it
 * gathers, and no further than half of what gathering costs: where gathering is cheap (a
 * search's texts' own indexes), a walk that meets the matches bunched far along the sort order
 * adds little to it (`/expenses?search=hava&sort=-amount`: a walk of ten samples, 25 ms, before
 * a gathering of 25 ms).
 */
const TESTED_SAMPLES = 10;

function testedSamples(total: number, gatherCost: number): number {
  const budget = (total * gatherCost) / 2 / (TESTED_ROW_COST * SAMPLE_INTERVAL);
  return Math.max(1, Math.min(TESTED_SAMPLES, Math.floor(budget)));
}

/** A filtered list and what `listPage` weighs to read its pages. */
export interface ListQueries {
  list: SampledListName;
  matching: AnyQuery;
  /** The same rows written for a walk in a sort order, when that differs (see `containsSearch`). */
  walking?: AnyQuery;
  /**
   * The index that reads the filtered rows best on SQLite (a filter's own index), or null to
   * leave the choice to the planner (a search, read through its trigram table) or to `matching`
   * (a search by its texts, which names the indexes it reads).
   */
  filterIndex: string | null;
  /**
   * Whether the filters keep few rows through their own index (named employees, a search, a
   * date window, `updated_since`), so that few enough matches are gathered and sorted.
   */
  selective: boolean;
  /**
   * Whether the filters name the employees whose rows are listed, so their matches are few (an
   * employee's own records): a page whose total is not cached yet is read with its total in
   * one query (see `countedPage`).
   */
  fewMatches?: boolean;
  /** Whether a filter limits the sort column to a range (`from` for a date sort, say). */
  filtersBoundSortColumn: boolean;
  /**
   * Whether a walk in another column's order is worth bounding by the sort values of the
   * matches (a date window or `updated_since`, whose matches bunch up in correlated columns).
   */
  boundable: boolean;
  /**
   * A search whose walk tests each row's texts (a table look-up an index entry): `texts` when
   * its matches are gathered from its texts' own indexes (`matching` names them), `indexed`
   * through the trigram index, `scanned` when gathering them tests every row too (one or two
   * letters that too many texts contain).
   */
  search?: 'texts' | 'indexed' | 'scanned';
  /** The filters as the list's samples see them, when they can count them. */
  sampled?: SampledFilter;
  /** The total counted another way than the samples or a count of the rows (cached by it). */
  counted?: (version: number) => Promise<number>;
}

/** The filters every sampled list takes, as `sampledFilterOf` weighs them. */
export interface WindowFilters {
  status?: readonly string[];
  employeeIds?: readonly number[];
  search?: string;
  from?: string;
  to?: string;
  updatedSince?: string;
}

/**
 * The filters as a list's samples count them: statuses and groups, with the rows of a date
 * window as those dated (`window.to`) by `to` less those dated (`window.from`) before `from`,
 * and `updated_since` as every row less those updated before it. Named employees, a search, or
 * a window together with `updated_since` are counted by the database instead (undefined).
 * `kept` makes the company's rows of those statuses and groups, with no other filter.
 */
export function sampledFilterOf(
  filters: WindowFilters,
  groups: readonly number[] | undefined,
  kept: () => AnyQuery,
  window: { from: string; to: string },
): SampledFilter | undefined {
  const { from, to, updatedSince } = filters;
  if (filters.employeeIds || filters.search || ((from || to) && updatedSince)) return undefined;
  const base = { statuses: filters.status, groups, kept: kept() };
  if (updatedSince) {
    return {
      ...base,
      whole: true,
      terms: [{ sign: -1, column: 'updated_at', value: updatedSince, inclusive: false }],
    };
  }
  return {
    ...base,
    whole: !to,
    terms: [
      ...(to ? [{ sign: 1 as const, column: window.to, value: to, inclusive: true }] : []),
      ...(from ? [{ sign: -1 as const, column: window.from, value: from, inclusive: false }] : []),
    ],
  };
}

/**
 * Up to this many matches of selective filters are gathered and sorted for every page rather
 * than walked in the sort order (correlated data makes a walk a poor bet: a recent
 * `updated_since` sorted by `start_date` walked the whole company).
 */
export const GATHER_LIMIT = 20_000;

/** A cache key that is not a query: its text and parameters name the value exactly. */
export const keyOf = (text: string, parameters: unknown[]) => ({
  compile: () => ({ sql: text, parameters }),
});

/**
 * The company's samples of the list at `version` (null: it has none), loaded once per version;
 * while they are being made the list is read without them, and asked again next time.
 */
export async function samplesOf(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  version: number,
): Promise<ListSamples | null> {
  const found = await source.samples.value(
    companyId,
    version,
    keyOf('samples', [list]),
    () => loadListSamples(source.db, companyId, list, version),
    (loaded) => loaded !== SAMPLES_BEING_MADE,
  );
  return found === SAMPLES_BEING_MADE ? null : found;
}

/** The total of a sampled filter: whole groups from the totals, each term from a column's samples. */
async function sampledTotal(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  samples: ListSamples,
  filter: SampledFilter,
  version: number,
): Promise<number> {
  const kept = keptGroups(samples, filter.statuses, filter.groups);
  let total = filter.whole ? kept.reduce((sum, g) => sum + (samples.totals[g] as number), 0) : 0;
  const sqlite = !isPostgres(source.db);
  for (const term of filter.terms) {
    const column = await columnSamples(source.db, samples, companyId, list, term.column);
    const j = sampleBelow(column, term.value, term.inclusive);
    const qualified = sql.ref(`${SAMPLED_LISTS[list].alias}.${term.column}`);
    const idColumn = sql.ref(`${SAMPLED_LISTS[list].alias}.id`);
    let edge = indexedBy(filter.kept, orderIndex(list, term.column), sqlite);
    edge = edge.where(qualified, term.inclusive ? '<=' : '<', term.value);
    if (j >= 0) {
      const value = column.values[j];
      const id = column.ids[j] as number;
      // `column >= value` is implied by the row comparison, but PostgreSQL estimates a row
      // comparison's selectivity blindly: without it, a day's edge of a year's window was counted
      // along the leave type's index, 10,433 rows (116 ms), instead of the sort column's (2 ms).
      edge =
        term.column === 'id'
          ? edge.where(idColumn, '>', id)
          : edge
              .where(qualified, '>=', value)
              .where((eb) =>
                eb(
                  eb.refTuple(qualified as never, idColumn as never),
                  '>',
                  eb.tuple(value as never, id as never),
                ),
              );
    }
    const below = await cachedCount(source.derived, companyId, version, edge);
    const sampled = j >= 0 ? rankAt(column, samples.groups.length, kept, j) : 0;
    total += term.sign * (sampled + below);
  }
  return total;
}

/**
 * One page of a list and its total; `rowsOfIds` fetches the rows for the page's ids, in the
 * ids' order. The total comes from the list's samples when its filters are statuses, groups
 * and date bounds they count, else from a count (cached per data version). A page of only
 * statuses and groups starts from a sample; a page of selective filters with few matches is
 * gathered through their own index and sorted; anything else is walked in the sort order,
 * through an index that carries every filtered column (migration 0005), from page anchors.
 */
export async function listPage<Row extends { id: number }>(
  source: ListSource,
  companyId: number,
  lists: ListQueries,
  order: ListOrder,
  page: PageRequest,
  rowsOfIds: (ids: number[]) => Promise<Row[]>,
): Promise<{ rows: Row[]; total: number }> {
  const { list, matching, sampled } = lists;
  const version = await source.version();
  const sqlite = !isPostgres(source.db);
  const samples = sampled ? await samplesOf(source, companyId, list, version) : null;
  // SQLite reads `filtered` through the indexes its hints name: the filters' own, or a search's
  // texts' (named by `matching` itself).
  const hinted = sqlite && (lists.filterIndex !== null || lists.search === 'texts');
  const filtered = lists.filterIndex ? indexedBy(matching, lists.filterIndex, sqlite) : matching;
  // The page read with the total, when the total was not cached (see `fewMatches`).
  let countedIds: number[] | undefined;
  const withPage = async () => {
    const counted = await countedPage(source.db, filtered, order, page, hinted);
    countedIds = counted?.ids;
    return counted?.total ?? null;
  };
  const total =
    samples && sampled
      ? await sampledTotal(source, companyId, list, samples, sampled, version)
      : lists.counted
        ? await lists.counted(version)
        : await cachedCount(
            source.derived,
            companyId,
            version,
            filtered,
            lists.fewMatches ? withPage : undefined,
          );
  if (offsetOf(page) >= total) return { rows: [], total };
  if (countedIds) return { rows: await rowsOf(countedIds, rowsOfIds), total };
  const sortColumn = order.column.slice(order.column.indexOf('.') + 1);
  const walked = indexedBy(lists.walking ?? matching, orderIndex(list, sortColumn), sqlite);
  const gatherCost = sqlite ? GATHER_COST : POSTGRES_GATHER_COST;
  // A window's page from the samples walks to it from the sample before it, then past the
  // non-matches among the page's rows; gathering a few matches costs less.
  const walkToPage = (rows: number) =>
    SAMPLE_INTERVAL + (Math.min(page.perPage, total) * rows) / total <= total * gatherCost;
  const ranks =
    samples &&
    sampled &&
    sampled.terms.length > 0 &&
    !lists.filtersBoundSortColumn &&
    walkToPage(sum(samples.totals))
      ? await windowRanks(source, { companyId, list }, samples, sampled, sortColumn)
      : null;
  let ids: number[];
  if (samples && sampled && sampled.terms.length === 0 && sampled.whole) {
    const column = await columnSamples(source.db, samples, companyId, list, sortColumn);
    const kept = keptGroups(samples, sampled.statuses, sampled.groups);
    const groups = samples.groups.length;
    ids = await sampledPage(walked, order, page, total, {
      count: column.ids.length,
      rank: (j) => rankAt(column, groups, kept, j),
      key: (j) => sampleKey(column, j),
    });
  } else if (ranks) {
    ids = await sampledPage(walked, order, page, total, ranks);
  } else if (lists.selective && !lists.filtersBoundSortColumn && total <= GATHER_LIMIT) {
    ids = await gatheredPage(source.db, filtered, order, page, total, hinted);
  } else {
    // The list's samples, when the company's list has them (loaded above for sampled filters).
    const listSamples =
      samples ?? (lists.selective ? await samplesOf(source, companyId, list, version) : null);
    const sortSamples = () =>
      listSamples ? columnSamples(source.db, listSamples, companyId, list, sortColumn) : null;
    // Where a walk in `direction` starts (see `walkedPage`): at the first row the filters' own
    // bounds on the sort column allow, at the probed or gathered first match of a filter whose
    // matches bunch up, and on PostgreSQL in id order at the company's own first or last id.
    const boundsOf = async (direction: 'asc' | 'desc') => {
      if (lists.filtersBoundSortColumn) {
        const sorted = indexedBy(matching, orderIndex(list, sortColumn), sqlite);
        return seekBounds(source, companyId, version, sorted, order);
      }
      if (lists.boundable) {
        const queries = { filtered, walked, hinted };
        const walk = { ...order, direction };
        return sortBounds(source, companyId, version, queries, walk, await sortSamples());
      }
      if (!sqlite && sortColumn === 'id') {
        return seekBounds(source, companyId, version, companyRows(source, list, companyId), order);
      }
      return null;
    };
    // A selective filter with more matches than are always gathered is still gathered where
    // a walk would cost more (a quarter's matches are 1 in 40 of the list).
    const testsRows = lists.search !== undefined;
    const walkGatherCost =
      lists.search === 'indexed' ? SEARCH_GATHER_COST : testsRows ? GATHER_COST : gatherCost;
    const gathers =
      listSamples && lists.selective && !lists.filtersBoundSortColumn && lists.search !== 'scanned';
    const testedColumn = gathers && testsRows ? await sortSamples() : null;
    const gathering: Gathering | undefined =
      listSamples && gathers
        ? {
            walkCost: (sum(listSamples.totals) / total) * (testsRows ? TESTED_ROW_COST : 1),
            gatherCost: walkGatherCost,
            tested: testedColumn
              ? { column: testedColumn, samples: testedSamples(total, walkGatherCost) }
              : undefined,
            page: () => gatheredPage(source.db, filtered, order, page, total, hinted),
          }
        : undefined;
    ids = await walkedPage(source, companyId, walked, order, page, total, boundsOf, gathering);
  }
  return { rows: await rowsOf(ids, rowsOfIds), total };
}

const sum = (counts: readonly number[]) => counts.reduce((all, count) => all + count, 0);

/** December 9999 (`monthOf`): the last month a stored date or timestamp can be in. */
const LAST_MONTH_STORED = 9999 * 12 + 11;

/** The first instant of a month, in ms (that of the year 10000 for the month after the last). */
const monthInstant = (month: number) =>
  month > LAST_MONTH_STORED
    ? Date.parse('+010000-01-01T00:00:00Z')
    : Date.parse(`${monthStart(month)}T00:00:00Z`);

/** A sample's sort value and id. */
const sampleKey = (column: ColumnSamples, j: number) => ({
  value: column.values[j],
  id: column.ids[j] as number,
});

/**
 * Every MONTH_STRIDE-th of the sort order's samples ranked for a window or `updated_since` (its
 * matches up to and including the sample), from the month counts of its date columns in that
 * order: the statuses' rows up to the sample (`updated_since`: every row), plus or minus each
 * term's rows dated before its value. A term's rows are those of the months before its value's
 * month, plus the rows of that month dated before the value, or those up to the end of that
 * month less the rows dated from the value on, whichever part of the month is shorter; that
 * part's rows are read through the date's own index, sorted in the page's order, and counted up
 * to each sample by a binary search (none read when the part is empty: a window of whole
 * months). Null when a term's date has no month counts in this order, or when the filter keeps
 * some leave types or categories (the counts are by status alone).
 */
async function windowRanks(
  source: ListSource,
  of: { companyId: number; list: SampledListName },
  samples: ListSamples,
  filter: SampledFilter,
  sortColumn: string,
): Promise<RankedSamples | null> {
  if (filter.groups) return null;
  const { companyId, list } = of;
  const column = await columnSamples(source.db, samples, companyId, list, sortColumn);
  const kept = keptGroups(samples, filter.statuses, undefined);
  const groups = samples.groups.length;
  // The i-th kept sample is sample `sampleOf(i)` of the order.
  const sampleOf = (i: number) => (i + 1) * MONTH_STRIDE - 1;
  const parts: Array<(i: number) => number> = [];
  if (filter.whole) parts.push((i) => rankAt(column, groups, kept, sampleOf(i)));
  const key = (i: number) => sampleKey(column, sampleOf(i));
  for (const term of filter.terms) {
    const months = await monthCounts(source.db, samples, companyId, list, sortColumn, term.column);
    if (!months) return null;
    const part = await termRanks(source, list, filter, term, months, { key, sortColumn });
    parts.push(term.sign === 1 ? part : (i) => -part(i));
  }
  return {
    count: Math.floor(column.ids.length / MONTH_STRIDE),
    rank: (i) => parts.reduce((rank, part) => rank + part(i), 0),
    key,
  };
}

/** A term's rows up to each kept sample (see `windowRanks`). */
async function termRanks(
  source: ListSource,
  list: SampledListName,
  filter: SampledFilter,
  term: SampledTerm,
  months: MonthCounts,
  sorted: { key: (i: number) => Anchor; sortColumn: string },
): Promise<(i: number) => number> {
  const { key: sampleKeyOf, sortColumn } = sorted;
  const statuses = months.statuses.flatMap((status, s) =>
    !filter.statuses || filter.statuses.includes(status) ? [s] : [],
  );
  const month = monthOf(term.value);
  // The rows up to kept sample i dated in the counted months up to `m` (relative to the first).
  const upTo = (i: number, m: number) => {
    if (m < 0) return 0;
    const at = (i * months.months + Math.min(m, months.months - 1)) * months.statuses.length;
    let rows = 0;
    for (const s of statuses) rows += months.counts[at + s] as number;
    return rows;
  };
  const m = month - months.first;
  if (m < 0 || m >= months.months) return (i) => upTo(i, m);
  const timestamp = term.column.endsWith('_at');
  const boundary = (month: number) =>
    timestamp ? `${monthStart(month)}T00:00:00Z` : monthStart(month);
  // The term's value as an instant: dates count to the end of their day when inclusive.
  const instant =
    Date.parse(timestamp ? term.value : `${term.value}T00:00:00Z`) +
    (!timestamp && term.inclusive ? DAY_MS : 0);
  const before = instant - monthInstant(month);
  const after = monthInstant(month + 1) - instant;
  const counted = before <= after ? m - 1 : m;
  const { alias } = SAMPLED_LISTS[list];
  const date = sql.ref(`${alias}.${term.column}`);
  // The part of the month on the shorter side of the value, unless it is provably empty.
  let edge: AnyQuery | null = null;
  if (before <= after && !(before === 0 && !term.inclusive)) {
    edge = filter.kept
      .where(date, '>=', boundary(month))
      .where(date, term.inclusive ? '<=' : '<', term.value);
  } else if (before > after && !(after === 0 && !timestamp)) {
    edge = filter.kept.where(date, term.inclusive ? '>' : '>=', term.value);
    // No stored date is as late as the year 10000 (nor would its text sort after 9999's).
    if (month < LAST_MONTH_STORED) edge = edge.where(date, '<', boundary(month + 1));
  }
  if (!edge) return (i) => upTo(i, counted);
  const sqlite = !isPostgres(source.db);
  const sortsById = sortColumn === 'id';
  const rows = (await indexedBy(edge, orderIndex(list, term.column), sqlite)
    .clearSelect()
    .select([sql.ref(`${alias}.${sortColumn}`).as('value'), sql.ref(`${alias}.id`).as('id')])
    .execute()) as Array<{ value: string | number; id: number }>;
  const keys = rows.map((row) => ({
    value: sortsById ? Number(row.id) : row.value,
    id: Number(row.id),
  }));
  keys.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.id - b.id));
  // The edge's rows up to and including kept sample i in the sort order.
  const edgeUpTo = (i: number) => {
    const sample = sampleKeyOf(i);
    const value = (sortsById ? sample.id : sample.value) as string | number;
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      const key = keys[middle] as { value: string | number; id: number };
      if (key.value < value || (key.value === value && key.id <= sample.id)) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const sign = before <= after ? 1 : -1;
  return (i) => upTo(i, counted) + sign * edgeUpTo(i);
}

/**
 * Every row of the company's list, unfiltered: on PostgreSQL a walk in id order starts at
 * their lowest or highest id (see `seekBounds`). PostgreSQL plans a walk that reads each row (a
 * search tested row by row) on the primary key, `id` alone, as the order costs it the same as
 * through `(company_id, id)`; started at the top of the whole table, the walk passed every row
 * of the companies whose ids come after the company's: `/expenses?search=M&sort=-id` passed the
 * 250,009 expenses of the bench data's 500 small companies (149–292 ms) before the large
 * company's first, and takes 0.09 ms started at its highest id.
 */
function companyRows(source: ListSource, list: SampledListName, companyId: number): AnyQuery {
  const { table, alias } = SAMPLED_LISTS[list];
  return (source.db as unknown as Kysely<Record<string, never>>)
    .selectFrom(`${table} as ${alias}` as never)
    .where(`${alias}.company_id` as never, '=', companyId as never) as AnyQuery;
}

/**
 * The lowest and highest sort value of `sorted`'s rows (rows whose filters bound the sort
 * column, or the company's whole list), found by entering its index at either end of that
 * range (cached per data version). A walk starts there, at an anchor of its own, so the
 * filters' bound on the same column need not be its start (see `walking` in the list queries).
 */
function seekBounds(
  source: ListSource,
  companyId: number,
  version: number,
  sorted: AnyQuery,
  order: ListOrder,
): Promise<SortBounds | null> {
  const end = (direction: 'asc' | 'desc') =>
    sorted
      .clearSelect()
      .select(sql.ref(order.column).as('value'))
      .orderBy(sql.ref(order.column), direction)
      .limit(1);
  return source.bounds.value(companyId, version, end('asc'), async () => {
    const [low, high] = await Promise.all([
      end('asc').executeTakeFirst(),
      end('desc').executeTakeFirst(),
    ]);
    if (!low || !high) return null;
    return { min: (low as { value: unknown }).value, max: (high as { value: unknown }).value };
  });
}

/**
 * How many of the sort column's samples from the end a walk starts at it is probed for its
 * first match before the matches are gathered to bound it (see `sortBounds`).
 */
const PROBED_SAMPLES = 5;

/**
 * The lowest and highest sort value of the filtered rows (cached per data version), or at
 * least the end a walk in `walk`'s direction starts from: the lowest when ascending, the
 * highest when descending (the other may be undefined). A walk in the sort order starts there
 * and reads none of the rows before the first match (or after the last, walking back): a year
 * of leaves sorted by `updated_at` otherwise walked past every leave updated in the years
 * before it.
 *
 * Where the sort column has samples, that end is first probed: the walk itself, over the rows
 * up to the PROBED_SAMPLES-th sample from that end (a few thousand index entries). Where the
 * matches are spread along the sort order (a window sorted by id, where ids do not follow the
 * dates) the probe finds a match at once, and so it does at the end where the matches bunch up
 * (the latest year of leaves in `created_at` order, walked back from its end). Only when the
 * probe finds none are the matches gathered, through the filters' own index, which costs a
 * read of every match (24 ms on average, up to 71 ms, for the windows and `updated_since` of
 * the cold mix) and gives both ends.
 */
function sortBounds(
  source: ListSource,
  companyId: number,
  version: number,
  queries: { filtered: AnyQuery; walked: AnyQuery; hinted: boolean },
  walk: ListOrder,
  column: ColumnSamples | null,
): Promise<SortBounds | null> {
  // Asked for min() and max() directly, PostgreSQL reads them from the sort column's own
  // index, walking the very rows that bounding the walk is to avoid (815,694 of them for a
  // year of leaves by created_at): there the matches are gathered first, in a fenced
  // subquery (`fromMatched`). Where the filters' index is named (`hinted`, SQLite) they are
  // read through it directly.
  const value = sql.ref(walk.column);
  const gathered = !queries.hinted
    ? fromMatched(source.db, queries.filtered, [value.as('value')]).select([
        sql`min(value)`.as('min'),
        sql`max(value)`.as('max'),
      ])
    : queries.filtered
        .clearSelect()
        .select([sql`min(${value})`.as('min'), sql`max(${value})`.as('max')]);
  const both = () =>
    source.bounds.value(companyId, version, gathered, async () => {
      const row = (await gathered.executeTakeFirst()) as SortBounds | undefined;
      return row && row.min !== null && row.max !== null ? row : null;
    });
  const probe = column ? probedEnd(queries.walked, walk, column) : null;
  if (!probe) return both();
  return source.bounds.value(companyId, version, probe, async () => {
    const found = (await probe.executeTakeFirst()) as { value: unknown } | undefined;
    if (!found) return both();
    return walk.direction === 'asc'
      ? { min: found.value, max: undefined }
      : { min: undefined, max: found.value };
  });
}

/**
 * The first match of a walk in `walk`'s order among the rows up to the PROBED_SAMPLES-th sample
 * from the end it starts at, or null when the column has too few samples to probe.
 */
function probedEnd(walked: AnyQuery, walk: ListOrder, column: ColumnSamples): AnyQuery | null {
  const last = column.values.length - 1;
  if (last + 1 < 2 * PROBED_SAMPLES) return null;
  const ascending = walk.direction === 'asc';
  return walked
    .clearSelect()
    .select(sql.ref(walk.column).as('value'))
    .where(
      sql.ref(walk.column),
      ascending ? '<=' : '>=',
      column.values[ascending ? PROBED_SAMPLES - 1 : last - (PROBED_SAMPLES - 1)],
    )
    .orderBy(sql.ref(walk.column), walk.direction)
    .limit(1);
}

/** The joined rows of a page's ids, in the ids' order. */
export async function rowsOf<Row extends { id: number }>(
  ids: number[],
  fetch: (ids: number[]) => Promise<Row[]>,
): Promise<Row[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await fetch(ids)).map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export { ANCHOR_INTERVAL } from './list-pages.ts';
