/**
 * Seeded randomness for generated data: one PRNG, never Math.random, so the same seed always
 * gives the same output. The helpers all draw from an `Rng` passed in, so callers control the
 * order of draws (which is what makes output reproducible).
 */

export type Rng = () => number;

/** mulberry32: tiny and plenty good for demo data; returns floats in [0, 1). */
export function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer from min to max, both included. */
export function int(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function chance(rng: Rng, probability: number): boolean {
  return rng() < probability;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[Math.floor(rng() * items.length)];
  if (item === undefined) throw new Error('pick() from an empty list');
  return item;
}

export function weighted<T>(rng: Rng, entries: readonly (readonly [T, number])[]): T {
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  let left = rng() * total;
  for (const [value, weight] of entries) {
    left -= weight;
    if (left < 0) return value;
  }
  return pick(rng, entries)[0]; // only reached through float rounding
}

/** A key of `weights`, chosen in proportion to its weight. */
export function weightedKey<K extends string>(rng: Rng, weights: Record<K, number>): K {
  return weighted(rng, Object.entries(weights) as [K, number][]);
}

/** `count` distinct items in random order. */
export function sample<T>(rng: Rng, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && pool.length > 0) {
    chosen.push(...pool.splice(Math.floor(rng() * pool.length), 1));
  }
  return chosen;
}

/** Long name lists stay compact as one space-separated string. */
export function words(text: string): readonly string[] {
  return text.trim().split(/\s+/);
}

/** Lists of phrases stay compact as one `|`-separated string. */
export function list(text: string): readonly string[] {
  return text.split('|').map((item) => item.trim());
}

export function digits(rng: Rng, count: number): string {
  return Array.from({ length: count }, () => int(rng, 0, 9)).join('');
}
