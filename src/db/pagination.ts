import { cachedCount } from './derived-cache.ts';
import { countedPage, gatheredPage } from './gathered-pages.ts';
import { indexedBy } from './index-hints.ts';
import { type AnyQuery, nearerEnd } from './list-order.ts';
import { columnSamples } from './list-samples-load.ts';
import { keptGroups, rankAt, sampleKey } from './list-samples-lookup.ts';
import { type ListOrder, type ListSource, offsetOf, type PageRequest } from './list-source.ts';
import { type SampledFilter, sampledTotal, samplesOf } from './sampled-filters.ts';
import { orderIndex, SAMPLE_INTERVAL, type SampledListName } from './sampled-lists.ts';
import { isPostgres } from './search.ts';
import { type BoundedBy, companyRows, seekBounds, sortBounds } from './sort-bounds.ts';
import { type Gathering, sampledPage, walkedPage } from './walked-pages.ts';
import { windowRanks } from './window-ranks.ts';

/**
 * A list's page and its meta as the API returns them, and how `listPage` chooses to read a page
 * of a long list: from its samples, gathered, or walked (the ways themselves:
 * walked-pages.ts and gathered-pages.ts).
 */

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
  /** The same rows written for a walk in a sort order, when that differs (see `testedOnEachRow`). */
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
   * Whether the filters' matches are few (an employee's own records, or a search's within date
   * bounds that hold few rows): a page whose total is not cached yet is read with its total in
   * one query (see `countedPage`).
   */
  fewMatches?: boolean;
  /** Whether a filter limits the sort column to a range (`from` for a date sort, say). */
  filtersBoundSortColumn: boolean;
  /**
   * The rows of every filter but the search, when there is one: where the filters bound the
   * sort column, a walk starts at the first or last of these (see `seekBounds`), as its first
   * match sought through the search cost more than the walk itself (0.2–0.7 s a search of one
   * letter within `updated_since` sorted by `updated_at`, the trigram table's matches gathered
   * for each end).
   */
  unsearched?: AnyQuery;
  /**
   * Where a search's matches are read by its texts within date bounds (SQLite): the rows of every
   * filter but the search through the bounds' own index, and how many of them are read at most
   * for a walk's bounds, which their lowest and highest sort value give when they are no more
   * than that (see `sortBounds`); and the date column that bounds them, with its bounds, from
   * whose samples that is told first.
   */
  boundedBy?: BoundedBy;
  /**
   * Where the filters bound the sort column (a walk starts at the bound: `filtersBoundSortColumn`)
   * and a search's matches are read from its texts' own indexes: those matches (see
   * `TextsInBounds`), gathered and sorted for the page when a walk to it would test more rows
   * than that costs.
   */
  textsInBounds?: TextsInBounds;
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

/**
 * A search's matches within bounds on the sort column, read from its texts' own indexes (the
 * expenses' titles and merchants): `matches` (naming the indexes on SQLite), the index entries
 * read beyond the matches themselves (an `updated_since` is tested in the entries of every
 * date; a window is a range of them), and the bounds on the sort column. A walk from the bound
 * tests every row in it until the page is full: few matches spread through wide bounds made it
 * test most of them (page 2 of `/expenses?search=lucio&from=2022-10-01&to=2022-12-31` sorted
 * by `-expense_date`: 280 matches, 17,800 of the quarter's rows tested, 178 ms; gathered, 2 ms).
 */
export interface TextsInBounds {
  matches: AnyQuery;
  entries: number;
  /** The rows in the bounds (every filter but the search), counted in a list without samples. */
  rows: AnyQuery;
  low?: string | undefined;
  high?: string | undefined;
}

/**
 * Up to this many matches of selective filters are gathered and sorted for every page rather
 * than walked in the sort order (correlated data makes a walk a poor bet: a recent
 * `updated_since` sorted by `start_date` walked the whole company).
 */
export const GATHER_LIMIT = 20_000;

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
  } else if (
    lists.textsInBounds &&
    total <= GATHER_LIMIT &&
    (await walkTestsMore(source, companyId, list, version, lists.textsInBounds, sortColumn, {
      page,
      total,
    }))
  ) {
    ids = await gatheredPage(source.db, lists.textsInBounds.matches, order, page, total, sqlite);
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
        const bounded = lists.unsearched ?? matching;
        const sorted = indexedBy(bounded, orderIndex(list, sortColumn), sqlite);
        return seekBounds(source, companyId, version, sorted, order);
      }
      if (lists.boundable) {
        const boundedBy =
          lists.boundedBy &&
          (await fewEnoughInBounds(source, companyId, list, version, lists.boundedBy))
            ? lists.boundedBy
            : undefined;
        const queries = { filtered, walked, hinted, boundedBy };
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

/**
 * Whether a walk from the bound of the sort column to the page (from the nearer end) would cost
 * more than gathering the matches from their texts: the walk tests the bounds' rows in turn, on
 * average the bounds' rows over the matches for each match it passes. The bounds' rows are told
 * by the list's samples of the sort column, or counted in a list short enough to have none.
 */
async function walkTestsMore(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  version: number,
  texts: TextsInBounds,
  sortColumn: string,
  { page, total }: { page: PageRequest; total: number },
): Promise<boolean> {
  const sampled = await samplesWithin(source, companyId, list, version, sortColumn, texts);
  const inBounds =
    sampled === null
      ? await cachedCount(source.derived, companyId, version, texts.rows)
      : (sampled + 1) * SAMPLE_INTERVAL;
  const { position, limit } = nearerEnd(page, total);
  const tested = Math.min(inBounds, ((position + limit) * inBounds) / total);
  return tested * TESTED_ROW_COST > texts.entries + total * GATHER_COST;
}

/**
 * How many of the list's samples of `column` lie within the bounds: a sample interval's rows lie
 * between each two of them. Null when the list has no samples (it is short).
 */
async function samplesWithin(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  version: number,
  column: string,
  { low, high }: { low?: string | undefined; high?: string | undefined },
): Promise<number | null> {
  const samples = await samplesOf(source, companyId, list, version);
  if (!samples) return null;
  const { values } = await columnSamples(source.db, samples, companyId, list, column);
  return values
    .map(String)
    .filter((value) => (low === undefined || value >= low) && (high === undefined || value <= high))
    .length;
}

/**
 * Whether the list's samples of the bounds' column leave room for no more than `most` rows
 * between its bounds (a sample interval's rows lie between each two samples inside them), so
 * that reading them is not wasted on a narrow search within wide bounds (95 ms for
 * `/expenses?search=n&updated_since=2019-02-09T00:00:00Z&sort=created_at` on SQLite, before
 * its matches' bounds were read anyway). A list without samples is short: yes.
 */
async function fewEnoughInBounds(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  version: number,
  { most, column, low, high }: BoundedBy,
): Promise<boolean> {
  const inside = await samplesWithin(source, companyId, list, version, column, { low, high });
  return inside === null || (inside - 1) * SAMPLE_INTERVAL <= most;
}

const sum = (counts: readonly number[]) => counts.reduce((all, count) => all + count, 0);

/** The joined rows of a page's ids, in the ids' order. */
export async function rowsOf<Row extends { id: number }>(
  ids: number[],
  fetch: (ids: number[]) => Promise<Row[]>,
): Promise<Row[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await fetch(ids)).map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
