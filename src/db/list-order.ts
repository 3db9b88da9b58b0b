import { type SelectQueryBuilder, sql } from 'kysely';
import { type Anchor, type ListOrder, offsetOf, type PageRequest } from './list-source.ts';

/**
 * What every way of reading a page of a list (see walked-pages.ts and gathered-pages.ts) builds
 * on: the list's ids in a sort order, after an anchor, and where a page is read from.
 */

// The list helpers work on any table's filtered select; Kysely's per-table types cannot
// follow qualified column names given as strings.
// biome-ignore lint/suspicious/noExplicitAny: see above.
export type AnyQuery = SelectQueryBuilder<any, any, any>;

/** The same order, the other way. */
export const reversed = (order: ListOrder): ListOrder => ({
  ...order,
  direction: order.direction === 'asc' ? 'desc' : 'asc',
});

/** `query` sorted in `order`, ties (of another column than the id) broken by id. */
export function ordered(query: AnyQuery, order: ListOrder): AnyQuery {
  let q = query.orderBy(sql.ref(order.column), order.direction);
  if (order.column !== order.id) q = q.orderBy(sql.ref(order.id), order.direction);
  return q;
}

/** Only the rows after `anchor` in `order`. */
export function after(query: AnyQuery, order: ListOrder, anchor: Anchor): AnyQuery {
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

/** The ids of rows read with an `id` column. */
export const idsOf = (rows: unknown[]) => rows.map((row) => Number((row as { id: number }).id));

/** The ids of the matching rows, in `order`. */
export const orderedIds = (matching: AnyQuery, order: ListOrder): AnyQuery =>
  ordered(matching.clearSelect().select(sql.ref(order.id).as('id')), order);

/**
 * The ids of `limit` rows of the list in `order`, after `anchor` (if any) and `skip` more;
 * with `stop`, only among the rows whose sort value does not pass it.
 */
export async function idsAfter(
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
 * Where a page of `total` rows is read from: the rows before it in the list's own order when
 * it lies in the first half, else from the end, backwards (`fromEnd`), to be reversed.
 */
export function nearerEnd(page: PageRequest, total: number) {
  const offset = offsetOf(page);
  const limit = Math.min(page.perPage, total - offset);
  const fromEnd = offset + limit / 2 > total / 2;
  return { fromEnd, limit, position: fromEnd ? total - offset - limit : offset };
}
