import type { PageRequest } from '../db/pagination.ts';
import { normalizeTimestamp } from '../import/fields.ts';
import { DEFAULT_PER_PAGE } from '../schemas/common.ts';
import { ApiError } from './errors.ts';

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

/** `from` after `to` is a range no record can be in: a 422 rather than a silent empty page. */
export async function rejectInvertedDateRange(request: { query: unknown }): Promise<void> {
  const { from, to } = request.query as { from?: string; to?: string };
  if (from !== undefined && to !== undefined && from > to) {
    throw new ApiError('validation_failed', 'Invalid query parameters: from, to.', {
      errors: [
        { parameter: 'from', message: 'must not be after to' },
        { parameter: 'to', message: 'must not be before from' },
      ],
    });
  }
}

/** `updated_since` as stored timestamps are written: UTC, whole seconds. */
export const utcTimestamp = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : (normalizeTimestamp(value) ?? undefined);
