import {
  type Expression,
  type Kysely,
  PostgresAdapter,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import { fold } from '../fold.ts';
import type { Db } from './database.ts';
import { cachedCount, type DerivedCache } from './derived-cache.ts';

export interface PageRequest {
  page: number;
  perPage: number;
}

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

export const offsetOf = ({ page, perPage }: PageRequest): number => (page - 1) * perPage;

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
 * `column LIKE %text%` on a folded column, with the search text folded the same way and
 * `%`, `_` and `\` taken literally.
 */
export function containsFolded(column: string, search: string): Expression<SqlBool> {
  // No stored text holds NUL (the importer refuses it) and PostgreSQL cannot take one in a
  // parameter: such a search matches nothing, alike on both databases.
  if (search.includes('\u0000')) return sql<SqlBool>`1 = 0`;
  const escaped = fold(search).replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escaped}%`} escape '\\'`;
}

export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * A column for a WHERE term that SQLite must not choose an index for (its unary plus); as it
 * is on PostgreSQL, whose statistics choose well. Lists name their date columns so when a few
 * named employees hold far fewer rows than the date range: SQLite read a year of the large
 * company's expenses through the covering date index (145,176 rows, 325 ms) to find three
 * employees' 26, which their own index gives at once.
 */
export function keptFromSqliteIndexChoice(db: Db, column: string): Expression<unknown> {
  return isPostgres(db) ? sql.ref(column) : sql`+${sql.ref(column)}`;
}

/** A table whose two folded text columns `search` looks in (see migration 0004). */
export interface SearchedTable {
  table: 'employees' | 'expenses';
  /** The qualified id and folded columns, e.g. `x.id`, `x.title_folded`. */
  id: string;
  columns: [string, string];
}

/** The shortest text the trigram index can find; shorter ones are looked for row by row. */
const TRIGRAM = 3;

/**
 * Rows whose folded columns contain the search text, as `containsFolded` on either column
 * says. PostgreSQL answers that LIKE from its trigram indexes itself; SQLite is asked through
 * the FTS5 trigram table, whose phrase match is the same substring test.
 */
export function matchesSearch(
  db: Db,
  searched: SearchedTable,
  search: string,
): Expression<SqlBool> {
  const folded = fold(search);
  if (!isPostgres(db) && !search.includes('\u0000') && [...folded].length >= TRIGRAM) {
    const index = sql.table(`${searched.table}_search`);
    const phrase = `"${folded.replaceAll('"', '""')}"`;
    return sql<SqlBool>`${sql.ref(searched.id)} in (select rowid from ${index} where ${index} match ${phrase})`;
  }
  const [a, b] = searched.columns;
  return sql<SqlBool>`(${containsFolded(a, search)} or ${containsFolded(b, search)})`;
}

/** The joined rows of a page's ids, in the ids' order. */
async function rowsOf<Row extends { id: number }>(
  ids: number[],
  fetch: (ids: number[]) => Promise<Row[]>,
): Promise<Row[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await fetch(ids)).map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The caches of values derived from companies' data, shared by every request. */
export interface ListCaches {
  /** List totals and other numbers. */
  derived: DerivedCache<number>;
  /** Page anchors of long lists; fewer entries, each up to a few thousand anchors. */
  anchors: DerivedCache<Anchor[]>;
}

/** What one request's list queries read from. */
export interface ListSource extends ListCaches {
  db: Db;
  /**
   * The company's data version, read at most once per request. Cached values are computed
   * after it is read, so none is older than the version it is kept under.
   */
  version(): Promise<number>;
}

/** The sort key and id of one row of an ordered list. */
export interface Anchor {
  value: unknown;
  id: number;
}

/** An order over a list: a column, then the id as tie-breaker, both in one direction. */
export interface ListOrder {
  /** Qualified column, e.g. `l.start_date`; the id column itself for the default order. */
  column: string;
  id: string;
  direction: 'asc' | 'desc';
}

/** Every how many rows of a long list an anchor is kept. */
export const ANCHOR_INTERVAL = 1000;

// The list helpers work on any table's filtered select; Kysely's per-table types cannot
// follow qualified column names given as strings.
// biome-ignore lint/suspicious/noExplicitAny: see above.
type AnyQuery = SelectQueryBuilder<any, any, any>;

function ordered(query: AnyQuery, order: ListOrder): AnyQuery {
  let q = query.orderBy(sql.ref(order.column), order.direction);
  if (order.column !== order.id) q = q.orderBy(sql.ref(order.id), order.direction);
  return q;
}

/** A list to read in order: its matching rows and their order. */
interface OrderedList {
  matching: AnyQuery;
  order: ListOrder;
}

/**
 * The same list with its rows gathered first: the sort values and ids of every matching row in
 * a materialized common table expression, which neither database merges into the query that
 * reads it, so the filters choose the index it is read through, not the sort order.
 */
function gathered(db: Db, { matching, order }: OrderedList): OrderedList {
  const sortsById = order.column === order.id;
  const columns = sortsById
    ? [sql.ref(order.id).as('id')]
    : [sql.ref(order.column).as('sort_value'), sql.ref(order.id).as('id')];
  const query = (db as unknown as Kysely<Record<string, never>>)
    .with(
      (cte) => cte('matched').materialized(),
      () => matching.clearSelect().select(columns) as never,
    )
    .selectFrom('matched' as never);
  const id = 'matched.id';
  return {
    matching: query as AnyQuery,
    order: { column: sortsById ? id : 'matched.sort_value', id, direction: order.direction },
  };
}

/**
 * The sort key and id of every ANCHOR_INTERVAL-th row of the list (1-based positions
 * ANCHOR_INTERVAL, 2 × ANCHOR_INTERVAL, …), computed by the database in one ordered pass and
 * cached under the company's data version.
 */
async function anchorsOf(
  source: ListSource,
  companyId: number,
  { matching, order }: OrderedList,
): Promise<Anchor[]> {
  const position = sql<number>`row_number() over (order by ${sql.ref(order.column)} ${sql.raw(
    order.direction,
  )}, ${sql.ref(order.id)} ${sql.raw(order.direction)})`;
  const ranked = matching
    .clearSelect()
    .select([
      sql.ref(order.column).as('value'),
      sql.ref(order.id).as('id'),
      position.as('position'),
    ]);
  const query = (source.db as unknown as Kysely<Record<string, never>>)
    .selectFrom(ranked.as('ranked') as never)
    .select([sql.ref('value').as('value'), sql.ref('id').as('id')])
    .where(sql`position % ${ANCHOR_INTERVAL}`, '=', 0)
    .orderBy(sql.ref('position'));
  return source.anchors.value(companyId, await source.version(), query, async () =>
    (await query.execute()).map((row) => {
      const { value, id } = row as { value: unknown; id: number };
      return { value, id: Number(id) };
    }),
  );
}

/**
 * The ids of one page of `list`, in order. A shallow page skips its offset; a deep one starts
 * after the nearest anchor (of `anchored`, the same rows in the same order, perhaps read
 * another way) and skips fewer than ANCHOR_INTERVAL rows, so page 10,000 costs about what
 * page 10 does (once the anchors are made).
 */
async function idsOfPage(
  source: ListSource,
  companyId: number,
  list: OrderedList,
  anchored: OrderedList,
  page: PageRequest,
): Promise<number[]> {
  const { matching, order } = list;
  const offset = offsetOf(page);
  let query = ordered(matching.clearSelect().select(sql.ref(order.id).as('id')), order);
  let skip = offset;
  const anchorsBefore = Math.floor(offset / ANCHOR_INTERVAL);
  if (anchorsBefore > 0) {
    const anchors = await anchorsOf(source, companyId, anchored);
    const used = Math.min(anchorsBefore, anchors.length);
    const anchor = anchors[used - 1];
    if (anchor) {
      const after = order.direction === 'asc' ? '>' : '<';
      query = query.where((eb) =>
        order.column === order.id
          ? eb(sql.ref(order.id), after, anchor.id)
          : eb(
              eb.refTuple(sql.ref(order.column) as never, sql.ref(order.id) as never),
              after,
              eb.tuple(anchor.value as never, anchor.id as never),
            ),
      );
      skip = offset - used * ANCHOR_INTERVAL;
    }
  }
  const rows = await query.limit(page.perPage).offset(skip).execute();
  return rows.map((row) => Number((row as { id: number }).id));
}

/**
 * How many times more rows a walk may read than the even spread of matches predicts. Sort
 * columns and filters are correlated in real data (dates with dates and ids, amounts with
 * categories), and on the large data set walks read 30–75 times the prediction: a month of
 * leaves sorted by `created_at` read 598,620 rows for a page of 100 on PostgreSQL (587 ms, 20 ms
 * gathered); a quarter of one category sorted by amount, 250 ms a page (3 ms gathered).
 */
const WALK_UNDERESTIMATE = 10;

/**
 * Whether a page of a filtered list is cheaper to read from its rows gathered first
 * (`gathered`) than by walking the sort order. A walk starts at the nearest anchor, skips
 * fewer than ANCHOR_INTERVAL matches and stops once the page is full; if matches were spread
 * evenly it would read `all / matched` rows of the company for every one it keeps, but they
 * rarely are (WALK_UNDERESTIMATE), and a recent `updated_since` sorted by `start_date` walked
 * the whole company, 2.5 s a page over a million leaves. Gathering reads the `matched` rows
 * through the filters' own index and sorts them, a cost known in advance. So a filter that
 * keeps a small part of a large list is gathered for every page (at most about 30,000 rows for
 * a first page of 100 over a million); a broad one is walked.
 */
export function gathersMatches(
  counts: { matched: number; all: number },
  page: PageRequest,
): boolean {
  const { matched, all } = counts;
  const evenlySpread = ((offsetOf(page) % ANCHOR_INTERVAL) + page.perPage) * (all / matched);
  return matched < WALK_UNDERESTIMATE * evenlySpread;
}

/** A filtered list and what `listPage` weighs to read its pages. */
export interface ListQueries {
  matching: AnyQuery;
  /** The company's whole list of the same table. */
  everything: AnyQuery;
  /** Whether a filter limits the sort column to a range (`from` for a date sort, say). */
  filtersBoundSortColumn: boolean;
}

/**
 * One page of a list and its total; `rowsOfIds` fetches the rows for the page's ids, in the
 * ids' order. The counts (cached) of the filtered list and of the whole one choose how the ids
 * are read. A list whose filters keep part of it is read through the filters' own index: its
 * anchors always (they need every match: over a million leaves, 0.2 s where walking the sort
 * order for 80,000 of them took 2–3 s), its pages when `gathersMatches` says so. An unfiltered
 * list is walked in its sort order, and so is one whose filters bound the sort column
 * (`updated_since` sorted by `updated_at`): the walk then reads that range of the sort
 * column's index, no more than gathering would, and stops early.
 */
export async function listPage<Row extends { id: number }>(
  source: ListSource,
  companyId: number,
  lists: ListQueries,
  order: ListOrder,
  page: PageRequest,
  rowsOfIds: (ids: number[]) => Promise<Row[]>,
): Promise<{ rows: Row[]; total: number }> {
  const { matching, everything, filtersBoundSortColumn } = lists;
  const version = await source.version();
  const [total, all] = await Promise.all([
    cachedCount(source.derived, companyId, version, matching),
    cachedCount(source.derived, companyId, version, everything),
  ]);
  if (offsetOf(page) >= total) return { rows: [], total };
  const walked = { matching, order };
  const anchored = total < all && !filtersBoundSortColumn ? gathered(source.db, walked) : walked;
  const list =
    anchored !== walked && gathersMatches({ matched: total, all }, page) ? anchored : walked;
  const ids = await idsOfPage(source, companyId, list, anchored, page);
  return { rows: await rowsOf(ids, rowsOfIds), total };
}
