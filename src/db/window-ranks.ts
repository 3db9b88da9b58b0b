import { sql } from 'kysely';
import { DAY_MS } from '../time.ts';
import { indexedBy } from './index-hints.ts';
import type { AnyQuery } from './list-order.ts';
import {
  columnSamples,
  type ListSamples,
  type MonthCounts,
  monthCounts,
} from './list-samples-load.ts';
import { keptGroups, rankAt, sampleKey } from './list-samples-lookup.ts';
import type { Anchor, ListSource } from './list-source.ts';
import type { SampledFilter, SampledTerm } from './sampled-filters.ts';
import {
  MONTH_STRIDE,
  monthOf,
  monthStart,
  orderIndex,
  SAMPLED_LISTS,
  type SampledListName,
} from './sampled-lists.ts';
import { isPostgres } from './search.ts';
import type { RankedSamples } from './walked-pages.ts';

/**
 * A page of a date window or `updated_since` placed from the list's samples: their month counts
 * rank the samples of the page's sort order by the window's rows (`windowRanks`).
 */

/** December 9999 (`monthOf`): the last month a stored date or timestamp can be in. */
const LAST_MONTH_STORED = 9999 * 12 + 11;

/** The first instant of a month, in ms (that of the year 10000 for the month after the last). */
const monthInstant = (month: number) =>
  month > LAST_MONTH_STORED
    ? Date.parse('+010000-01-01T00:00:00Z')
    : Date.parse(`${monthStart(month)}T00:00:00Z`);

/**
 * Every MONTH_STRIDE-th of the sort order's samples ranked for a window or `updated_since` (its
 * matches up to and including the sample), from the month counts of its date columns in that
 * order: the statuses' rows up to the sample (`updated_since`: every row), plus or minus each
 * term's rows dated before its value. A term's rows are those of the months before its value's
 * month, plus the rows of that month dated before the value, or those up to the end of that
 * month less the rows dated from the value on, whichever part of the month is shorter; that
 * part's rows are read through the date's own index, sorted in the page's order, and counted up
 * to each sample by a binary search (none read when the part is empty: a window of whole
 * months). Null when a term's date has no month counts in this order, or when the filter keeps
 * some leave types or categories (the counts are by status alone).
 */
export async function windowRanks(
  source: ListSource,
  of: { companyId: number; list: SampledListName },
  samples: ListSamples,
  filter: SampledFilter,
  sortColumn: string,
): Promise<RankedSamples | null> {
  if (filter.groups) return null;
  const { companyId, list } = of;
  const column = await columnSamples(source.db, samples, companyId, list, sortColumn);
  const kept = keptGroups(samples, filter.statuses, undefined);
  const groups = samples.groups.length;
  // The i-th kept sample is sample `sampleOf(i)` of the order.
  const sampleOf = (i: number) => (i + 1) * MONTH_STRIDE - 1;
  const parts: Array<(i: number) => number> = [];
  if (filter.whole) parts.push((i) => rankAt(column, groups, kept, sampleOf(i)));
  const key = (i: number) => sampleKey(column, sampleOf(i));
  for (const term of filter.terms) {
    const months = await monthCounts(source.db, samples, companyId, list, sortColumn, term.column);
    if (!months) return null;
    const part = await termRanks(source, list, filter, term, months, { key, sortColumn });
    parts.push(term.sign === 1 ? part : (i) => -part(i));
  }
  return {
    count: Math.floor(column.ids.length / MONTH_STRIDE),
    rank: (i) => parts.reduce((rank, part) => rank + part(i), 0),
    key,
  };
}

/** A term's rows up to each kept sample (see `windowRanks`). */
async function termRanks(
  source: ListSource,
  list: SampledListName,
  filter: SampledFilter,
  term: SampledTerm,
  months: MonthCounts,
  sorted: { key: (i: number) => Anchor; sortColumn: string },
): Promise<(i: number) => number> {
  const { key: sampleKeyOf, sortColumn } = sorted;
  const statuses = months.statuses.flatMap((status, s) =>
    !filter.statuses || filter.statuses.includes(status) ? [s] : [],
  );
  const month = monthOf(term.value);
  // The rows up to kept sample i dated in the counted months up to `m` (relative to the first).
  const upTo = (i: number, m: number) => {
    if (m < 0) return 0;
    const at = (i * months.months + Math.min(m, months.months - 1)) * months.statuses.length;
    let rows = 0;
    for (const s of statuses) rows += months.counts[at + s] as number;
    return rows;
  };
  const m = month - months.first;
  if (m < 0 || m >= months.months) return (i) => upTo(i, m);
  const timestamp = term.column.endsWith('_at');
  const boundary = (month: number) =>
    timestamp ? `${monthStart(month)}T00:00:00Z` : monthStart(month);
  // The term's value as an instant: dates count to the end of their day when inclusive.
  const instant =
    Date.parse(timestamp ? term.value : `${term.value}T00:00:00Z`) +
    (!timestamp && term.inclusive ? DAY_MS : 0);
  const before = instant - monthInstant(month);
  const after = monthInstant(month + 1) - instant;
  const counted = before <= after ? m - 1 : m;
  const { alias } = SAMPLED_LISTS[list];
  const date = sql.ref(`${alias}.${term.column}`);
  // The part of the month on the shorter side of the value, unless it is provably empty.
  let edge: AnyQuery | null = null;
  if (before <= after && !(before === 0 && !term.inclusive)) {
    edge = filter.kept
      .where(date, '>=', boundary(month))
      .where(date, term.inclusive ? '<=' : '<', term.value);
  } else if (before > after && !(after === 0 && !timestamp)) {
    edge = filter.kept.where(date, term.inclusive ? '>' : '>=', term.value);
    // No stored date is as late as the year 10000 (nor would its text sort after 9999's).
    if (month < LAST_MONTH_STORED) edge = edge.where(date, '<', boundary(month + 1));
  }
  if (!edge) return (i) => upTo(i, counted);
  const sqlite = !isPostgres(source.db);
  const sortsById = sortColumn === 'id';
  const rows = (await indexedBy(edge, orderIndex(list, term.column), sqlite)
    .clearSelect()
    .select([sql.ref(`${alias}.${sortColumn}`).as('value'), sql.ref(`${alias}.id`).as('id')])
    .execute()) as Array<{ value: string | number; id: number }>;
  const keys = rows.map((row) => ({
    value: sortsById ? Number(row.id) : row.value,
    id: Number(row.id),
  }));
  keys.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.id - b.id));
  // The edge's rows up to and including kept sample i in the sort order.
  const edgeUpTo = (i: number) => {
    const sample = sampleKeyOf(i);
    const value = (sortsById ? sample.id : sample.value) as string | number;
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      const key = keys[middle] as { value: string | number; id: number };
      if (key.value < value || (key.value === value && key.id <= sample.id)) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const sign = before <= after ? 1 : -1;
  return (i) => upTo(i, counted) + sign * edgeUpTo(i);
}
