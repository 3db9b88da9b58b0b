import { type Kysely, sql } from 'kysely';
import { fromMatched } from './gathered-pages.ts';
import type { AnyQuery } from './list-order.ts';
import type { ColumnSamples } from './list-samples-load.ts';
import type { ListOrder, ListSource, SortBounds } from './list-source.ts';
import { SAMPLED_LISTS, type SampledListName } from './sampled-lists.ts';

/**
 * Where a walk in the sort order starts and ends: the lowest and highest sort value of the rows
 * it can meet, so that it reads none of the rows before the first match (`sortBounds`,
 * `seekBounds`).
 */

/** See `boundedBy` in `ListQueries` (src/db/pagination.ts). */
export interface BoundedBy {
  rows: AnyQuery;
  most: number;
  column: string;
  low?: string | undefined;
  high?: string | undefined;
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
export function companyRows(
  source: ListSource,
  list: SampledListName,
  companyId: number,
): AnyQuery {
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
export function seekBounds(
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
export function sortBounds(
  source: ListSource,
  companyId: number,
  version: number,
  queries: {
    filtered: AnyQuery;
    walked: AnyQuery;
    hinted: boolean;
    boundedBy?: BoundedBy | undefined;
  },
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
  const matched = () =>
    source.bounds.value(companyId, version, gathered, async () => {
      const row = (await gathered.executeTakeFirst()) as SortBounds | undefined;
      return row && row.min !== null && row.max !== null ? row : null;
    });
  const { boundedBy } = queries;
  const both = boundedBy
    ? () => boundsOfRows(source, companyId, version, boundedBy, walk, matched)
    : matched;
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
 * The lowest and highest sort value of the rows of every filter but the search (`boundedBy`),
 * when there are no more than `most` of them: bounds that hold every match, read from the
 * bounds' own index rather than from every row of the search's texts (which those of any date
 * carry). A broad search of one letter within a year sorted by `updated_at` read its texts'
 * rows twice, to count them and for the bounds (100–120 ms each on SQLite); the year's rows
 * give its bounds in a few milliseconds, and its walk meets a match within a few rows of them.
 * More rows than that (a narrow search within wide bounds), and `matched` gives the bounds.
 */
async function boundsOfRows(
  source: ListSource,
  companyId: number,
  version: number,
  boundedBy: BoundedBy,
  walk: ListOrder,
  matched: () => Promise<SortBounds | null>,
): Promise<SortBounds | null> {
  const read = boundedBy.rows
    .clearSelect()
    .select(sql.ref(walk.column).as('value'))
    .limit(boundedBy.most + 1);
  const query = source.db
    .selectFrom(read.as('bounded'))
    .select([sql`min(value)`.as('min'), sql`max(value)`.as('max'), sql`count(*)`.as('rows')]);
  const bounds = await source.bounds.value(companyId, version, query, async () => {
    const row = (await query.executeTakeFirst()) as (SortBounds & { rows: number }) | undefined;
    if (!row || Number(row.rows) > boundedBy.most) return TOO_MANY_ROWS;
    return row.min !== null && row.max !== null ? { min: row.min, max: row.max } : null;
  });
  return bounds === TOO_MANY_ROWS ? matched() : bounds;
}

/** Cached for rows too many to give bounds (`boundsOfRows`), so they are not read again. */
const TOO_MANY_ROWS: SortBounds = Object.freeze({ min: undefined, max: undefined });

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
