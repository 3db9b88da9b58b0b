import { type Day, dayOf } from '../../src/demo/calendar.ts';
import type { Context, DemoIds } from '../../src/demo/context.ts';
import type { Rng } from '../../src/demo/random.ts';

/**
 * The ten years the bench data covers. Fixed dates, not "today", so the same seed gives the
 * same file on any day.
 */

export const FIRST_DAY: Day = dayOf(new Date('2016-01-01T00:00:00Z'));
export const LAST_DAY: Day = dayOf(new Date('2025-12-31T00:00:00Z'));

/** The demo generator's context, with "today" the day after the period, so nothing is future. */
export function companyContext(rng: Rng, ids: DemoIds): Context {
  return { rng, ids, companyId: ids.company, today: LAST_DAY + 1, lastDay: LAST_DAY };
}

/**
 * Splits `total` among people in proportion to their weights (days worked in the period); the
 * shares add up to `total` exactly, however the rounding falls.
 */
export function proportionalShares(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  let cumulative = 0;
  let given = 0;
  return weights.map((weight) => {
    cumulative += weight;
    const upTo = Math.round((total * cumulative) / sum);
    const share = upTo - given;
    given = upTo;
    return share;
  });
}

/** The `index`-th of `count` equal, consecutive stretches of the days `from`..`to`. */
export function slot(from: Day, to: Day, index: number, count: number): [Day, Day] {
  const length = (to - from + 1) / count;
  const start = from + Math.floor(index * length);
  return [start, Math.max(start, from + Math.floor((index + 1) * length) - 1)];
}
