import { type AliasedExpression, type Kysely, sql } from 'kysely';
import type { Db } from './database.ts';
import { type AnyQuery, idsOf, nearerEnd, ordered, orderedIds, reversed } from './list-order.ts';
import { type ListOrder, offsetOf, type PageRequest } from './list-source.ts';
import { isPostgres } from './search.ts';

/**
 * A page of a long list gathered and sorted (see `listPage`; the walks: walked-pages.ts): the
 * matching rows read through the filters' own index, in a fenced subquery where no index can be
 * named, and sorted; with its total, where the matches are few.
 */

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
