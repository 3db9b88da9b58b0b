import type { PaginationMeta } from '../../src/db/pagination.ts';

/**
 * The problem bodies and pagination meta the API tests expect, written out once as a client
 * reads them (not built from src/, so a changed text fails the tests).
 */

/** A problem+json body as the API sends it. */
export const problem = (code: string, title: string, status: number, detail: string) => ({
  type: `/docs/errors#${code}`,
  title,
  status,
  detail,
  code,
});

/** The 404 of a record id that is absent, another company's or malformed. */
export const NOT_FOUND = problem('not_found', 'Not found', 404, 'No record with this id exists.');

/** The 404 of a path no route serves. */
export const NO_SUCH_RESOURCE = problem('not_found', 'Not found', 404, 'No such resource.');

export const UNAUTHENTICATED = problem(
  'unauthenticated',
  'Unauthenticated',
  401,
  'A valid API key is required: send Authorization: Bearer <key>.',
);

export const COMPANY_INACTIVE = problem(
  'company_inactive',
  'Company inactive',
  403,
  'The company this key belongs to is inactive.',
);

export const METHOD_NOT_ALLOWED = problem(
  'method_not_allowed',
  'Method not allowed',
  405,
  'This API is read-only: only GET and HEAD are allowed.',
);

type ParameterError = [parameter: string, message: string] | { parameter: string; message: string };

/** The 422 naming each bad query parameter with its message, in order. */
export function validationFailed(...entries: ParameterError[]) {
  const errors = entries.map((e) => (Array.isArray(e) ? { parameter: e[0], message: e[1] } : e));
  return {
    type: '/docs/errors#validation_failed',
    title: 'Validation failed',
    status: 422,
    detail: `Invalid query parameter${errors.length > 1 ? 's' : ''}: ${errors.map((e) => e.parameter).join(', ')}.`,
    code: 'validation_failed',
    errors,
  };
}

/** The 403 of a key without the operation's scope. */
export const insufficientScope = (scope: string) =>
  problem(
    'insufficient_scope',
    'Insufficient scope',
    403,
    `This operation needs the scope ${scope}.`,
  );

/** A list's meta: the first page of 25 of an empty list, with `fields` changed. */
export const meta = (fields: Partial<PaginationMeta> = {}): PaginationMeta => ({
  current_page: 1,
  per_page: 25,
  total: 0,
  last_page: 1,
  from: null,
  to: null,
  ...fields,
});

/** The meta of page `page` of `total` records, `perPage` a page, worked out as the API must. */
export function pageMeta(total: number, page = 1, perPage = 25): PaginationMeta {
  const first = (page - 1) * perPage + 1;
  const onPage = Math.max(0, Math.min(perPage, total - first + 1));
  return {
    current_page: page,
    per_page: perPage,
    total,
    last_page: Math.max(1, Math.ceil(total / perPage)),
    from: onPage > 0 ? first : null,
    to: onPage > 0 ? first + onPage - 1 : null,
  };
}
