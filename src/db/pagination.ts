import { type Expression, type SqlBool, sql } from 'kysely';
import { fold } from '../fold.ts';
import type { Db } from './database.ts';
import type { DerivedCache } from './derived-cache.ts';

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface PaginationMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  from: number | null;
  to: number | null;
}

export interface Page<T> {
  data: T[];
  meta: PaginationMeta;
}

export const offsetOf = ({ page, perPage }: PageRequest): number => (page - 1) * perPage;

/** Meta for a page: `from`/`to` are 1-based positions, null on an empty page; last_page ≥ 1. */
export function pageOf<T>(data: T[], total: number, request: PageRequest): Page<T> {
  const first = offsetOf(request) + 1;
  return {
    data,
    meta: {
      current_page: request.page,
      per_page: request.perPage,
      total,
      last_page: Math.max(1, Math.ceil(total / request.perPage)),
      from: data.length > 0 ? first : null,
      to: data.length > 0 ? first + data.length - 1 : null,
    },
  };
}

/**
 * `column LIKE %text%` on a folded column, with the search text folded the same way and
 * `%`, `_` and `\` taken literally.
 */
export function containsFolded(column: string, search: string): Expression<SqlBool> {
  // No stored text holds NUL (the importer refuses it) and PostgreSQL cannot take one in a
  // parameter: such a search matches nothing, alike on both databases.
  if (search.includes('\u0000')) return sql<SqlBool>`1 = 0`;
  const escaped = fold(search).replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escaped}%`} escape '\\'`;
}

/**
 * A page's rows in two steps: first the ids, ordered and offset on the filtered table alone
 * (often index-only), then the joined rows of just those ids, put back in the ids' order.
 * Skipped rows of a deep page are never joined.
 */
export async function rowsOfPage<Row extends { id: number }>(
  ids: { execute(): Promise<Array<{ id: number }>> },
  rowsOf: (ids: number[]) => Promise<Row[]>,
): Promise<Row[]> {
  const pageIds = (await ids.execute()).map((row) => row.id);
  if (pageIds.length === 0) return [];
  const byId = new Map((await rowsOf(pageIds)).map((row) => [row.id, row]));
  return pageIds.flatMap((id) => byId.get(id) ?? []);
}

/** What list queries read from: the database, and the values derived from it. */
export interface ListSource {
  db: Db;
  derived: DerivedCache;
}
