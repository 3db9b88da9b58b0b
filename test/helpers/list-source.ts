import type { Db } from '../../src/db/database.ts';
import { DerivedCache } from '../../src/db/derived-cache.ts';
import type { AnchorRun, ListSource, SortBounds } from '../../src/db/list-source.ts';

/** A list source over `db` at data version 1, with empty caches of its own. */
export const freshListSource = (db: Db): ListSource => ({
  db,
  version: async () => 1,
  derived: new DerivedCache<number>(),
  anchors: new DerivedCache<AnchorRun>(),
  samples: new DerivedCache(),
  bounds: new DerivedCache<SortBounds | null>(),
});
