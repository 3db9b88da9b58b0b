import type { Day } from '../../src/demo/calendar.ts';
import { type Context, type DemoRecord, RETIRED_BEFORE_DAYS } from '../../src/demo/context.ts';
import { type Rng, weighted } from '../../src/demo/random.ts';

/**
 * A company's leave types or expense categories: their records, and the draw of one for a leave
 * or expense. As in the demo, a retired kind only appears on records from before it was retired.
 */

export interface Kinds<T> {
  records: DemoRecord[];
  /** One of the kinds, by weight, that a record on `day` may have. */
  draw(rng: Rng, day: Day): T;
}

interface Kind {
  spec: { weight: number; active: boolean };
}

export function kindsOf<T extends Kind>(
  ctx: Context,
  records: DemoRecord[],
  kinds: readonly T[],
): Kinds<T> {
  const entry = (kind: T) => [kind, kind.spec.weight] as const;
  const all = kinds.map(entry);
  const current = kinds.filter((kind) => kind.spec.active).map(entry);
  const retiredFrom = ctx.today - RETIRED_BEFORE_DAYS;
  return { records, draw: (rng, day) => weighted(rng, day < retiredFrom ? all : current) };
}
