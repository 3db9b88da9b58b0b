import {
  type AliasedExpression,
  CompiledQuery,
  type Kysely,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import type { Db } from './database.ts';
import type { ColumnSamples } from './list-samples-load.ts';
import { sampleBefore, sampleBelow } from './list-samples-lookup.ts';
import {
  type Anchor,
  type AnchorRun,
  type ListOrder,
  type ListSource,
  offsetOf,
  type PageRequest,
  type SortBounds,
} from './list-source.ts';
import { isPostgres } from './search.ts';
import type { Chain } from './sqlite-readers.ts';

/**
 * The three ways a page of a long list is read (see `listPage`): walked in the sort order from
 * a page anchor, walked from a list sample, or gathered and sorted.
 */

/** Every how many rows of a walked list an anchor is kept. */
export const ANCHOR_INTERVAL = 1000;

// The list helpers work on any table's filtered select; Kysely's per-table types cannot
// follow qualified column names given as strings.
// biome-ignore lint/suspicious/noExplicitAny: see above.
export type AnyQuery = SelectQueryBuilder<any, any, any>;

const reversed = (order: ListOrder): ListOrder => ({
  ...order,
  direction: order.direction === 'asc' ? 'desc' : 'asc',
});

function ordered(query: AnyQuery, order: ListOrder): AnyQuery {
  let q = query.orderBy(sql.ref(order.column), order.direction);
  if (order.column !== order.id) q = q.orderBy(sql.ref(order.id), order.direction);
  return q;
}

/** Only the rows after `anchor` in `order`. */
function after(query: AnyQuery, order: ListOrder, anchor: Anchor): AnyQuery {
  const comparison = order.direction === 'asc' ? '>' : '<';
  return query.where((eb) =>
    order.column === order.id
      ? eb(sql.ref(order.id), comparison, anchor.id)
      : eb(
          eb.refTuple(sql.ref(order.column) as never, sql.ref(order.id) as never),
          comparison,
          eb.tuple(anchor.value as never, anchor.id as never),
        ),
  );
}

const idsOf = (rows: unknown[]) => rows.map((row) => Number((row as { id: number }).id));

/** The ids of the matching rows, in `order`. */
const orderedIds = (matching: AnyQuery, order: ListOrder): AnyQuery =>
  ordered(matching.clearSelect().select(sql.ref(order.id).as('id')), order);

/**
 * The ids of `limit` rows of the list in `order`, after `anchor` (if any) and `skip` more;
 * with `stop`, only among the rows whose sort value does not pass it.
 */
async function idsAfter(
  matching: AnyQuery,
  order: ListOrder,
  anchor: Anchor | null,
  skip: number,
  limit: number,
  stop?: unknown,
): Promise<number[]> {
  let query = orderedIds(matching, order);
  if (anchor) query = after(query, order, anchor);
  if (stop !== undefined) {
    query = query.where(sql.ref(order.column), order.direction === 'asc' ? '<=' : '>=', stop);
  }
  return idsOf(await query.limit(limit).offset(skip).execute());
}

/**
 * The sort value `samples` samples past `start` in `order` (from the list's start when null),
 * or undefined when the list ends before it.
 */
function stopAfter(
  column: ColumnSamples,
  samples: number,
  order: ListOrder,
  start: Anchor | null,
): unknown {
  const value = start === null ? null : order.column === order.id ? start.id : start.value;
  if (order.direction === 'asc') {
    const j = value === null ? -1 : sampleBelow(column, value, true);
    return column.values[j + samples];
  }
  const j = value === null ? column.values.length : sampleBelow(column, value, false) + 1;
  return j - samples >= 0 ? column.values[j - samples] : undefined;
}

/**
 * Where a page of `total` rows is read from: the rows before it in the list's own order when
 * it lies in the first half, else from the end, backwards (`fromEnd`), to be reversed.
 */
function nearerEnd(page: PageRequest, total: number) {
  const offset = offsetOf(page);
  const limit = Math.min(page.perPage, total - offset);
  const fromEnd = offset + limit / 2 > total / 2;
  return { fromEnd, limit, position: fromEnd ? total - offset - limit : offset };
}

/** Placeholders whose places in a compiled query's parameters `chainedAnchors` looks up. */
const PLACEHOLDER_VALUE = '\u0000anchor value';
const PLACEHOLDER_ID = '\u0000anchor id';

/**
 * The next `count` anchors of the list after `last` (from its start when null): each is found
 * by skipping ANCHOR_INTERVAL - 1 rows after the one before, through the list's index alone,
 * so making the anchors down to a depth costs one pass over the index to that depth.
 */
async function chainedAnchors(
  source: ListSource,
  matching: AnyQuery,
  order: ListOrder,
  last: Anchor | null,
  count: number,
  origin: Anchor | null,
): Promise<Anchor[]> {
  const step = (query: AnyQuery) =>
    ordered(
      query.clearSelect().select([sql.ref(order.column).as('value'), sql.ref(order.id).as('id')]),
      order,
    )
      .limit(1)
      .offset(ANCHOR_INTERVAL - 1);
  const anchors: Anchor[] = [];
  // No row of the list comes before the origin: chaining from it finds the same anchors.
  let previous = last ?? origin;
  if (previous === null) {
    const first = (await step(matching).executeTakeFirst()) as Anchor | undefined;
    if (first === undefined) return anchors;
    previous = { value: first.value, id: Number(first.id) };
    anchors.push(previous);
  }
  if (anchors.length >= count) return anchors;
  const placeholder = { value: PLACEHOLDER_VALUE, id: PLACEHOLDER_ID as unknown as number };
  const next = step(after(matching, order, placeholder)).compile();
  const idPosition = next.parameters.indexOf(PLACEHOLDER_ID);
  // The id order compares the id alone: the row's value (its id) goes to the id's place.
  const valuePosition =
    order.column === order.id ? idPosition : next.parameters.indexOf(PLACEHOLDER_VALUE);
  const parameters = [...next.parameters];
  parameters[valuePosition] = order.column === order.id ? previous.id : previous.value;
  parameters[idPosition] = previous.id;
  const chain: Chain = { positions: [valuePosition, idPosition], count: count - anchors.length };
  const query = { ...next, parameters } as CompiledQuery;
  const rows = source.chain
    ? await source.chain(query, chain)
    : isPostgres(source.db)
      ? await chainInOneStatement(source.db, query, chain)
      : await chainHere(source.db, query, chain);
  for (const row of rows as Anchor[]) anchors.push({ value: row.value, id: Number(row.id) });
  return anchors;
}

/**
 * `Chain` run by PostgreSQL in one statement: a recursive query whose every step is the link
 * with the previous step's row in the places the chain names. One query a link cost a round
 * trip and a plan each (~3 ms a link under load, 138 links for page 1,379 of a list: 0.5–0.7 s).
 */
async function chainInOneStatement(db: Db, query: CompiledQuery, chain: Chain): Promise<unknown[]> {
  const [valuePosition, idPosition] = chain.positions as [number, number];
  const placeholder = (position: number) => new RegExp(`\\$${position + 1}(?!\\d)`, 'g');
  // The columns are named as the link selects them: `value`, then `id`.
  const step = query.sql
    .replace(placeholder(idPosition), 'chain.id')
    .replace(placeholder(valuePosition), 'chain.value');
  const count = `$${query.parameters.length + 1}`;
  const recursive = `with recursive chain (n, value, id) as (
    select 1, first.value, first.id from (${query.sql}) as first
    union all
    select chain.n + 1, next.value, next.id
    from chain cross join lateral (${step}) as next
    where chain.n < ${count}
  ) select value, id from chain order by n`;
  const result = await db.executeQuery(
    CompiledQuery.raw(recursive, [...query.parameters, chain.count]),
  );
  return result.rows;
}

/** `Chain` run as one query a link, for databases without a chain of their own. */
async function chainHere(db: Db, query: CompiledQuery, chain: Chain): Promise<unknown[]> {
  const rows: unknown[] = [];
  const parameters = [...query.parameters];
  while (rows.length < chain.count) {
    const [row] = (await db.executeQuery({ ...query, parameters })).rows as Record<
      string,
      unknown
    >[];
    if (row === undefined) break;
    rows.push(row);
    const values = Object.values(row);
    chain.positions.forEach((position, index) => {
      parameters[position] = values[index];
    });
  }
  return rows;
}

/** The anchors of the list in `order` made so far, cached under the company's data version. */
async function anchorRun(
  source: ListSource,
  companyId: number,
  matching: AnyQuery,
  order: ListOrder,
): Promise<AnchorRun> {
  const key = orderedIds(matching, order);
  return source.anchors.value(companyId, await source.version(), key, async () => ({
    anchors: [],
    complete: false,
    extending: Promise.resolve(),
  }));
}

/**
 * At least the first `needed` anchors of the list in `order` (fewer when the list is shorter):
 * `run` made further only when a deeper page asks.
 */
async function anchorsUpTo(
  source: ListSource,
  run: AnchorRun,
  matching: AnyQuery,
  order: ListOrder,
  needed: number,
  origin: Anchor | null,
): Promise<Anchor[]> {
  if (run.anchors.length >= needed || run.complete) return run.anchors;
  const extension = run.extending.then(async () => {
    const missing = needed - run.anchors.length;
    if (missing <= 0 || run.complete) return;
    const last = run.anchors.at(-1) ?? null;
    const more = await chainedAnchors(source, matching, order, last, missing, origin);
    run.anchors.push(...more);
    if (more.length < missing) run.complete = true;
  });
  // A failed extension (database down) leaves the run as it was for the next request.
  run.extending = extension.catch(() => {});
  await extension;
  return run.anchors;
}

/**
 * A page's other way to be read, for `walkedPage` to take when it costs less. Costs are in
 * index entries passed by a walk that reads the index alone.
 */
export interface Gathering {
  /** What a walk costs per match it passes (the whole list's rows over the matches, say). */
  walkCost: number;
  /** What gathering costs per match. */
  gatherCost: number;
  /**
   * For a walk that tests each row (a look-up of the table an index entry): the list's samples
   * of the sort column, to stop the walk after `samples` of them and gather instead, as where
   * the matches bunch up far along the sort order no cost estimate sees it.
   */
  tested?: { column: ColumnSamples; samples: number };
  /** The page's ids, gathered through the filters' own index and sorted. */
  page(): Promise<number[]>;
}

/**
 * Where a walk in `order` can start without passing a row of the list: just before the lowest
 * sort value of its rows when ascending, just after the highest when descending.
 */
function originOf(order: ListOrder, bounds: SortBounds): Anchor {
  const ascending = order.direction === 'asc';
  if (order.column === order.id) {
    const id = Number(ascending ? bounds.min : bounds.max);
    return { value: null, id: ascending ? id - 1 : id + 1 };
  }
  return ascending
    ? { value: bounds.min, id: 0 }
    : { value: bounds.max, id: Number.MAX_SAFE_INTEGER };
}

/**
 * The ids of one page walked in the list's order from the nearer end (a page in the second
 * half is read backwards from the last row, and reversed), starting at the nearest anchor
 * (made the first time a page that deep is asked for) and skipping fewer than
 * ANCHOR_INTERVAL rows: page 10,000 costs about what page 10 does once its anchors exist.
 * With `boundsOf` (the lowest or highest sort value of its rows, the end a walk in the
 * direction it is given starts from, when it knows it), the walk starts there rather than at
 * the first or last row of the whole index. With
 * `gathering`, the page is gathered instead when the walk would pass more index entries than
 * gathering costs.
 */
export async function walkedPage(
  source: ListSource,
  companyId: number,
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
  total: number,
  boundsOf: (direction: 'asc' | 'desc') => Promise<SortBounds | null>,
  gathering?: Gathering,
): Promise<number[]> {
  const { fromEnd, limit, position } = nearerEnd(page, total);
  const walkOrder = fromEnd ? reversed(order) : order;
  const anchorsBefore = Math.floor(position / ANCHOR_INTERVAL);
  const run = anchorsBefore > 0 ? await anchorRun(source, companyId, matching, walkOrder) : null;
  if (gathering && !run?.complete) {
    // The matches still to pass: to the missing anchors, then to the page.
    const made = Math.min(run?.anchors.length ?? 0, anchorsBefore);
    const walked = (position - made * ANCHOR_INTERVAL) * gathering.walkCost;
    if (walked > total * gathering.gatherCost) return gathering.page();
  }
  const bounds = await boundsOf(walkOrder.direction);
  const origin = bounds ? originOf(walkOrder, bounds) : null;
  let anchor: Anchor | null = null;
  let skip = position;
  if (run) {
    const anchors = await anchorsUpTo(source, run, matching, walkOrder, anchorsBefore, origin);
    const used = Math.min(anchorsBefore, anchors.length);
    anchor = anchors[used - 1] ?? null;
    if (anchor) skip = position - used * ANCHOR_INTERVAL;
  }
  const start = anchor ?? origin;
  const tested = gathering?.tested;
  const stop = tested ? stopAfter(tested.column, tested.samples, walkOrder, start) : undefined;
  const ids = await idsAfter(matching, walkOrder, start, skip, limit, stop);
  if (stop !== undefined && ids.length < limit) return (gathering as Gathering).page();
  return fromEnd ? ids.reverse() : ids;
}

/**
 * Samples of a sort order ranked for a filter: each one's sort key, and its rank (the matches
 * up to and including it, rising with the sample).
 */
export interface RankedSamples {
  count: number;
  rank(sample: number): number;
  key(sample: number): Anchor;
}

/**
 * The ids of one page read from the list's samples in the sort order: the page starts after the
 * last sample with no more matches up to it (of the filter's statuses and groups, or of a
 * window, see `windowRanks`) than the page's position, and skips the difference (fewer than the
 * matches between two samples).
 */
export async function sampledPage(
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
  total: number,
  samples: RankedSamples,
): Promise<number[]> {
  const offset = offsetOf(page);
  const limit = Math.min(page.perPage, total - offset);
  // Samples count rows in ascending order: a descending page is the ascending one reversed.
  const descending = order.direction === 'desc';
  const ascending = descending ? reversed(order) : order;
  const start = descending ? total - offset - limit : offset;
  const j = sampleBefore(samples.count, samples.rank, start);
  const anchor = j < 0 ? null : samples.key(j);
  const skip = j < 0 ? start : start - samples.rank(j);
  const ids = await idsAfter(matching, ascending, anchor, skip, limit);
  return descending ? ids.reverse() : ids;
}

/**
 * The ids of one page gathered first: the sort values and ids of every matching row, read
 * through the filters' own index, then sorted. The page is taken from the nearer end (reversed
 * order from the last row when it lies in the second half), as a sort that keeps only the
 * rows up to the page holds fewer. When `matching` is `hinted` (SQLite, whose `INDEXED BY`
 * names the filters' index or a search's texts' indexes), the rows are sorted as they are
 * read; else they are first gathered in a fenced subquery (see `fromMatched`), so the filters
 * choose the index they are read through, not the sort order (PostgreSQL otherwise walks the
 * sort column's index; SQLite's trigram subquery of a search has no hint).
 */
export async function gatheredPage(
  db: Db,
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
  total: number,
  hinted: boolean,
): Promise<number[]> {
  const { fromEnd, limit, position } = nearerEnd(page, total);
  const sortOrder = fromEnd ? reversed(order) : order;
  const ids = idsOf(
    await (hinted ? orderedIds(matching, sortOrder) : fenced(db, matching, sortOrder))
      .limit(limit)
      .offset(position)
      .execute(),
  );
  return fromEnd ? ids.reverse() : ids;
}

/**
 * A page of the list and the number of its matches, read together: the page's ids in `order`
 * with a count over every match (a window function), so a list whose total is not yet known
 * costs one query instead of a count and then a page. The count makes the database read and
 * sort every match, so this is for lists whose matches are few (an employee's own records).
 * Null when the page has no rows (it lies past the end, or nothing matches): the count alone
 * then tells the total.
 */
export async function countedPage(
  db: Db,
  matching: AnyQuery,
  order: ListOrder,
  page: PageRequest,
  hinted: boolean,
): Promise<{ ids: number[]; total: number } | null> {
  const rows = await (hinted ? orderedIds(matching, order) : fenced(db, matching, order))
    .select(sql<number | string>`count(*) over ()`.as('total'))
    .limit(page.perPage)
    .offset(offsetOf(page))
    .execute();
  if (rows.length === 0) return null;
  return { ids: idsOf(rows), total: Number((rows[0] as { total: number | string }).total) };
}

/**
 * A query from `matched`: the `columns` of the matching rows, in a subquery with an `OFFSET 0`,
 * which neither database merges into the query that reads it (PostgreSQL's planner and
 * SQLite's flattener both leave a subquery with an offset whole), so the subquery is planned
 * for its filters alone, and its rows reach the query that sorts or sums them as they are read.
 * A materialized common table expression did the same by writing them to a table first, which
 * cost PostgreSQL 59 ms against 42 for a year of expenses (107,525 rows) sorted by amount.
 */
export function fromMatched(
  db: Db,
  matching: AnyQuery,
  columns: ReadonlyArray<AliasedExpression<unknown, string>>,
): AnyQuery {
  const rows = matching.clearSelect().select(columns);
  // SQLite takes an offset only after a limit; -1 is none. PostgreSQL takes no negative limit.
  const fence = isPostgres(db) ? rows.offset(0) : rows.limit(-1).offset(0);
  return (db as unknown as Kysely<Record<string, never>>).selectFrom(
    fence.as('matched') as never,
  ) as AnyQuery;
}

/** The matching rows' sort values and ids from `fromMatched`, read in `order`. */
function fenced(db: Db, matching: AnyQuery, order: ListOrder): AnyQuery {
  const sortsById = order.column === order.id;
  const columns = sortsById
    ? [sql.ref(order.id).as('id')]
    : [sql.ref(order.column).as('sort_value'), sql.ref(order.id).as('id')];
  const query = fromMatched(db, matching, columns).select(sql.ref('matched.id').as('id'));
  return ordered(query, {
    column: sortsById ? 'matched.id' : 'matched.sort_value',
    id: 'matched.id',
    direction: order.direction,
  });
}
