import type { PageRequest } from '../db/pagination.ts';
import { normalizeTimestamp } from '../import/fields.ts';
import { DEFAULT_PER_PAGE } from '../schemas/common.ts';
import { formatTimestamp } from '../time.ts';
import { ApiError, type ParameterError } from './errors.ts';

/**
 * Turns validated query strings into the typed filters the query modules take. The schemas
 * (src/schemas/common.ts) have already refused every malformed value, so these only convert.
 */

export const splitList = (value: string): string[] => value.split(',').map((part) => part.trim());

export const idList = (value: string | undefined): number[] | undefined =>
  value === undefined ? undefined : [...new Set(splitList(value).map(Number))];

export const valueList = <T extends string>(value: string | undefined): T[] | undefined =>
  value === undefined ? undefined : ([...new Set(splitList(value))] as T[]);

/** An empty search means no search. */
export const searchText = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

export interface SortOrder<F extends string> {
  field: F;
  direction: 'asc' | 'desc';
}

export function sortOrder<F extends string>(value: string | undefined): SortOrder<F> {
  if (value === undefined) return { field: 'id' as F, direction: 'asc' };
  return value.startsWith('-')
    ? { field: value.slice(1) as F, direction: 'desc' }
    : { field: value as F, direction: 'asc' };
}

export const pageRequest = (query: { page?: number; per_page?: number }): PageRequest => ({
  page: query.page ?? 1,
  perPage: query.per_page ?? DEFAULT_PER_PAGE,
});

const PLAIN_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `from` after `to` is a range no record can be in: a 422 rather than a silent empty page.
 * Also called by the error handler, so the pair is named alongside other bad parameters.
 */
export function invertedDateRangeErrors(query: unknown): ParameterError[] {
  const { from, to } = (query ?? {}) as { from?: unknown; to?: unknown };
  if (typeof from !== 'string' || typeof to !== 'string') return [];
  if (!PLAIN_DATE.test(from) || !PLAIN_DATE.test(to) || from <= to) return [];
  return [
    { parameter: 'from', message: 'must not be after to' },
    { parameter: 'to', message: 'must not be before from' },
  ];
}

export async function rejectInvertedDateRange(request: { query: unknown }): Promise<void> {
  const errors = invertedDateRangeErrors(request.query);
  if (errors.length > 0) {
    throw new ApiError('validation_failed', 'Invalid query parameters: from, to.', { errors });
  }
}

const LEAP_SECOND = /:60(?=(\.\d+)?([Zz]|[+-]\d\d:\d\d)$)/;

/**
 * `updated_since` as stored timestamps are written: UTC, whole seconds. A leap second (:60,
 * valid RFC 3339) is the instant after :59, so it is read as the next whole second.
 */
export function utcTimestamp(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!LEAP_SECOND.test(value)) return normalizeTimestamp(value) ?? undefined;
  const lastSecond = normalizeTimestamp(value.replace(LEAP_SECOND, ':59'));
  return lastSecond === null ? undefined : formatTimestamp(new Date(Date.parse(lastSecond) + 1000));
}
