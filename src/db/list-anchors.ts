import { CompiledQuery, sql } from 'kysely';
import type { Db } from './database.ts';
import { type AnyQuery, after, ordered, orderedIds } from './list-order.ts';
import type { Anchor, AnchorRun, ListOrder, ListSource } from './list-source.ts';
import { isPostgres } from './search.ts';
import type { Chain } from './sqlite-readers.ts';

/**
 * A walked list's page anchors (see `walkedPage`): made by chaining from one to the next
 * through the list's index, as deep as a page asks, and cached under the data version.
 */

/** Every how many rows of a walked list an anchor is kept. */
export const ANCHOR_INTERVAL = 1000;

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
export async function anchorRun(
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
export async function anchorsUpTo(
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
