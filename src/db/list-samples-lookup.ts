import type { ColumnSamples, ListSamples } from './list-samples-load.ts';

/** Look-ups over loaded list samples: where a filter's rows, a position or a value fall. */

/** The group indexes a filter of statuses and groups keeps (none given: all). */
export function keptGroups(
  samples: ListSamples,
  statuses: readonly string[] | undefined,
  groups: readonly number[] | undefined,
): number[] {
  const kept: number[] = [];
  samples.groups.forEach(([status, grp], i) => {
    if ((!statuses || statuses.includes(status)) && (!groups || groups.includes(grp))) kept.push(i);
  });
  return kept;
}

/** The rows of the kept groups up to and including sample `j`. */
export function rankAt(column: ColumnSamples, groups: number, kept: readonly number[], j: number) {
  let sum = 0;
  for (const g of kept) sum += column.counts[j * groups + g] as number;
  return sum;
}

/**
 * The last of `count` samples whose rank (the matches up to and including it, rising with the
 * sample) is at most `position`, or -1: a page at that position starts after it and skips
 * `position - rank` rows.
 */
export function sampleBefore(
  count: number,
  rank: (sample: number) => number,
  position: number,
): number {
  let low = 0;
  let high = count - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (rank(middle) <= position) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/**
 * The last sample whose sort value is below `value` (at most `value` when `inclusive`), or -1:
 * every row up to it is below too, and the rows between it and the next sample decide the rest.
 */
export function sampleBelow(column: ColumnSamples, value: unknown, inclusive: boolean): number {
  let low = 0;
  let high = column.values.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const sample = column.values[middle] as string | number;
    const below = inclusive
      ? sample <= (value as typeof sample)
      : sample < (value as typeof sample);
    if (below) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** A sample's sort value and id. */
export const sampleKey = (column: ColumnSamples, j: number) => ({
  value: column.values[j],
  id: column.ids[j] as number,
});
