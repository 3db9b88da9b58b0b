import { ANCHOR_INTERVAL, anchorRun, anchorsUpTo } from './list-anchors.ts';
import { type AnyQuery, idsAfter, nearerEnd, reversed } from './list-order.ts';
import type { ColumnSamples } from './list-samples-load.ts';
import { sampleBefore, sampleBelow } from './list-samples-lookup.ts';
import {
  type Anchor,
  type ListOrder,
  type ListSource,
  offsetOf,
  type PageRequest,
  type SortBounds,
} from './list-source.ts';

/**
 * Two of the three ways a page of a long list is read (see `listPage`): walked in the sort
 * order from a page anchor, or walked from a list sample (the third, gathered and sorted:
 * gathered-pages.ts).
 */

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
