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

/**
 * The sort key and id of every ANCHOR_INTERVAL-th row of the list (1-based positions
 * ANCHOR_INTERVAL, 2 × ANCHOR_INTERVAL, …), computed by the database in one ordered pass and
 * cached under the company's data version.
 */
async function anchorsOf(
  source: ListSource,
  companyId: number,
  matching: AnyQuery,
  order: ListOrder,
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
 * The ids of one page of the list, in order. A shallow page skips its offset; a deep one
 * starts after the nearest cached anchor and skips fewer than ANCHOR_INTERVAL rows, so page
 * 10,000 costs about what page 10 does (once the anchors are made).
 */
async function idsOfPage(
  source: ListSource,
  companyId: number,
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
): Promise<number[]> {
  const offset = offsetOf(page);
  let query = ordered(matching.clearSelect().select(sql.ref(order.id).as('id')), order);
  let skip = offset;
  const anchored = Math.floor(offset / ANCHOR_INTERVAL);
  if (anchored > 0) {
    const anchors = await anchorsOf(source, companyId, matching, order);
    const used = Math.min(anchored, anchors.length);
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
 * One page of a list and its total: the page's ids (see `idsOfPage`), the rows `rowsOfIds`
 * fetches for them in the ids' order, and the cached count of `matching`.
 */
export async function listPage<Row extends { id: number }>(
  source: ListSource,
  companyId: number,
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
  rowsOfIds: (ids: number[]) => Promise<Row[]>,
): Promise<{ rows: Row[]; total: number }> {
  const version = await source.version();
  const [rows, total] = await Promise.all([
    idsOfPage(source, companyId, matching, order, page).then((ids) => rowsOf(ids, rowsOfIds)),
    cachedCount(source.derived, companyId, version, matching),
  ]);
  return { rows, total };
}
