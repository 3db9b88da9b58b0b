import { sql } from 'kysely';
import { cachedCount, keyOf } from './derived-cache.ts';
import { indexedBy } from './index-hints.ts';
import type { AnyQuery } from './list-order.ts';
import {
  columnSamples,
  type ListSamples,
  loadListSamples,
  SAMPLES_BEING_MADE,
} from './list-samples-load.ts';
import { keptGroups, rankAt, sampleBelow } from './list-samples-lookup.ts';
import type { ListSource } from './list-source.ts';
import { orderIndex, SAMPLED_LISTS, type SampledListName } from './sampled-lists.ts';
import { isPostgres } from './search.ts';

/**
 * The filters a list's samples count (statuses, groups, a date window, `updated_since`), and
 * their total read from the samples rather than counted over the rows; the samples themselves
 * as a request gets them, through the list caches (`samplesOf`).
 */

/**
 * Rows of a sampled column below a value (at most the value when `inclusive`), added to or
 * taken from a sampled total.
 */
export interface SampledTerm {
  sign: 1 | -1;
  column: string;
  value: string;
  inclusive: boolean;
}

/** Filters that a list's samples can count, and perhaps place pages of. */
export interface SampledFilter {
  statuses?: readonly string[];
  groups?: readonly number[];
  /** The company's rows of those statuses and groups, with no other filter. */
  kept: AnyQuery;
  /**
   * The total: every kept row when `whole`, plus or minus the kept rows below each term's value
   * (a leave intersects [from, to] when it starts by `to` and does not end before `from`).
   */
  whole: boolean;
  terms: SampledTerm[];
}

/** The filters every sampled list takes, as `sampledFilterOf` weighs them. */
export interface WindowFilters {
  status?: readonly string[];
  employeeIds?: readonly number[];
  search?: string;
  from?: string;
  to?: string;
  updatedSince?: string;
}

/**
 * The filters as a list's samples count them: statuses and groups, with the rows of a date
 * window as those dated (`window.to`) by `to` less those dated (`window.from`) before `from`,
 * and `updated_since` as every row less those updated before it. Named employees, a search, or
 * a window together with `updated_since` are counted by the database instead (undefined).
 * `kept` makes the company's rows of those statuses and groups, with no other filter.
 */
export function sampledFilterOf(
  filters: WindowFilters,
  groups: readonly number[] | undefined,
  kept: () => AnyQuery,
  window: { from: string; to: string },
): SampledFilter | undefined {
  const { from, to, updatedSince } = filters;
  if (filters.employeeIds || filters.search || ((from || to) && updatedSince)) return undefined;
  const base = { statuses: filters.status, groups, kept: kept() };
  if (updatedSince) {
    return {
      ...base,
      whole: true,
      terms: [{ sign: -1, column: 'updated_at', value: updatedSince, inclusive: false }],
    };
  }
  return {
    ...base,
    whole: !to,
    terms: [
      ...(to ? [{ sign: 1 as const, column: window.to, value: to, inclusive: true }] : []),
      ...(from ? [{ sign: -1 as const, column: window.from, value: from, inclusive: false }] : []),
    ],
  };
}

/**
 * The company's samples of the list at `version` (null: it has none), loaded once per version;
 * while they are being made the list is read without them, and asked again next time.
 */
export async function samplesOf(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  version: number,
): Promise<ListSamples | null> {
  const found = await source.samples.value(
    companyId,
    version,
    keyOf('samples', [list]),
    () => loadListSamples(source.db, companyId, list, version),
    (loaded) => loaded !== SAMPLES_BEING_MADE,
  );
  return found === SAMPLES_BEING_MADE ? null : found;
}

/** The total of a sampled filter: whole groups from the totals, each term from a column's samples. */
export async function sampledTotal(
  source: ListSource,
  companyId: number,
  list: SampledListName,
  samples: ListSamples,
  filter: SampledFilter,
  version: number,
): Promise<number> {
  const kept = keptGroups(samples, filter.statuses, filter.groups);
  let total = filter.whole ? kept.reduce((sum, g) => sum + (samples.totals[g] as number), 0) : 0;
  const sqlite = !isPostgres(source.db);
  for (const term of filter.terms) {
    const column = await columnSamples(source.db, samples, companyId, list, term.column);
    const j = sampleBelow(column, term.value, term.inclusive);
    const qualified = sql.ref(`${SAMPLED_LISTS[list].alias}.${term.column}`);
    const idColumn = sql.ref(`${SAMPLED_LISTS[list].alias}.id`);
    let edge = indexedBy(filter.kept, orderIndex(list, term.column), sqlite);
    edge = edge.where(qualified, term.inclusive ? '<=' : '<', term.value);
    if (j >= 0) {
      const value = column.values[j];
      const id = column.ids[j] as number;
      // `column >= value` is implied by the row comparison, but PostgreSQL estimates a row
      // comparison's selectivity blindly: without it, a day's edge of a year's window was counted
      // along the leave type's index, 10,433 rows (116 ms), instead of the sort column's (2 ms).
      edge =
        term.column === 'id'
          ? edge.where(idColumn, '>', id)
          : edge
              .where(qualified, '>=', value)
              .where((eb) =>
                eb(
                  eb.refTuple(qualified as never, idColumn as never),
                  '>',
                  eb.tuple(value as never, id as never),
                ),
              );
    }
    const below = await cachedCount(source.derived, companyId, version, edge);
    const sampled = j >= 0 ? rankAt(column, samples.groups.length, kept, j) : 0;
    total += term.sign * (sampled + below);
  }
  return total;
}
