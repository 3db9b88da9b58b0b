import { type Expression, type SqlBool, sql } from 'kysely';
import { fold } from '../fold.ts';

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
