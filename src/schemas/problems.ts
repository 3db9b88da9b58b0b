/**
 * Every error the API answers, once: code, HTTP status, title, and when it is answered (the
 * error table of docs/api.md is generated from it: `npm run openapi`). Bodies are RFC 9457
 * problem details (`application/problem+json`) built by `problem()`; the named problems the
 * service throws are in src/http/errors.ts, the admin listener's own in src/admin/errors.ts.
 */
export const ERRORS = {
  bad_request: {
    status: 400,
    title: 'Bad request',
    when: 'the bytes are not HTTP (a NUL in a header, a space in the target, raw non-ASCII bytes in the target such as an unencoded `?search=straße`, which must be sent percent-encoded, `stra%C3%9Fe`, a method that is not a token, a request line that does not end in `HTTP/1.0` or `HTTP/1.1`; on the public listener, a raw `#` in the target, which must be sent as `%23`); an HTTP/1.1 request without `Host` or with several `Host` lines, or a `Host` (behind a trusted proxy, `X-Forwarded-Host` or `X-Forwarded-Proto`; for a request-target in absolute form, its own host) that names no host, as answers’ URLs are built from it; on the admin listener, a JSON body that is not UTF-8 or not JSON; any other client error the framework might raise',
  },
  unauthenticated: {
    status: 401,
    title: 'Unauthenticated',
    when: 'the `Authorization: Bearer` key is missing, malformed, unknown or revoked (with `WWW-Authenticate: Bearer`)',
  },
  company_inactive: {
    status: 403,
    title: 'Company inactive',
    when: 'the key’s company is inactive (or a signed receipt URL’s)',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    when: 'the operation needs a scope the key lacks, named in the body and in `WWW-Authenticate`',
  },
  invalid_signature: {
    status: 403,
    title: 'Invalid signature',
    when: 'a signed receipt URL was altered, truncated or has expired',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    when: 'no such path, or no record with this id in the key’s company (or a malformed id)',
  },
  receipt_not_found: {
    status: 404,
    title: 'Receipt not found',
    when: 'the expense has no receipt image, or its file is gone',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    when: 'any method but GET and HEAD on a known path (with `Allow: GET, HEAD`); on the admin listener, a method its path does not take (with `Allow` naming those it does)',
  },
  cursor_expired: {
    status: 410,
    title: 'Cursor expired',
    when: '`GET /changes` with an `after` cursor from before a deletion, of a resource it reads, that the feed forgot since the cursor was given (`CHANGES_RETENTION_DAYS`), or from before a purge of the company (its data deleted and imported again under the same id), or from an import the feed does not hold (its data restored from a copy older than the cursor): read the feed again from the beginning',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    when: 'the headers or the request did not arrive within the timeouts',
  },
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    when: 'an `If-Match` or `If-Unmodified-Since` on a static file of the reference page that does not hold',
  },
  content_too_large: {
    status: 413,
    title: 'Content too large',
    when: 'a request body over its limit: the public API reads none; on the admin listener, a JSON body over 1 MiB',
  },
  uri_too_long: {
    status: 414,
    title: 'URI too long',
    when: 'a target the router refuses for its length (the API answers such paths 404 today)',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    when: 'a `Content-Encoding` of the request that no decoder knows; on the admin listener, a body whose `Content-Type` the operation does not take (`application/json`, or NDJSON for an import)',
  },
  range_not_satisfiable: {
    status: 416,
    title: 'Range not satisfiable',
    when: 'a `Range` of a static file of the reference page that no byte of it satisfies: past its end, or not a range the file server reads (`bytes=5-2`); `Content-Range: bytes */` and the length',
  },
  validation_failed: {
    status: 422,
    title: 'Validation failed',
    when: 'query parameters (on the admin listener, body fields) are invalid; `errors` names each one with its message',
  },
  import_failed: {
    status: 422,
    title: 'Import failed',
    when: 'admin API only: a line of an NDJSON import is invalid; nothing was imported, and `errors` names the line and field',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    when: 'the key’s rate limit is exhausted in one of its windows (with `Retry-After`); on the admin API, too many failed tokens from one address',
  },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    when: 'the request line and headers are over Node’s size limit',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    when: 'an unexpected failure: the body never carries it, the log does',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    when: 'the database is unreachable, restarting or out of connections, or a query outlasts `DATABASE_STATEMENT_TIMEOUT_MS` (`Retry-After: 5`); or the instance is busy, or imports of the company committed during three reads of the answer in a row (`Retry-After: 1`); on the admin listener, a change that met another import or command writing the same rows (nothing was changed)',
  },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ParameterError {
  parameter: string;
  message: string;
}

/** An import_failed entry: the line of the NDJSON body, the field and what is wrong with it. */
export interface LineError {
  line: number;
  field: string;
  message: string;
}

export type ProblemErrors = ParameterError[] | LineError[];

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: ProblemErrors;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** The service's page that explains every code, one anchor each (http/openapi/errors-page.ts). */
export const ERRORS_PAGE_PATH = '/docs/errors';
/** A problem's `type`: the code's entry on the errors page, relative to the service's root. */
export const errorTypeUri = (code: ErrorCode): string => `${ERRORS_PAGE_PATH}#${code}`;

export function problem(code: ErrorCode, detail: string, errors?: ProblemErrors): Problem {
  const { status, title } = ERRORS[code];
  return {
    type: errorTypeUri(code),
    title,
    status,
    detail,
    code,
    ...(errors ? { errors } : {}),
  };
}

/**
 * Every error code, grouped by status, each a Markdown link to its entry on the errors page:
 * `[unauthenticated](/docs/errors#unauthenticated) (401), [company_inactive](…), … (403), …`.
 */
export function errorCodesByStatus(): string {
  const codes = new Map<number, string[]>();
  for (const [code, { status }] of Object.entries(ERRORS)) {
    const link = `[${code}](${errorTypeUri(code as ErrorCode)})`;
    codes.set(status, [...(codes.get(status) ?? []), link]);
  }
  return [...codes].map(([status, names]) => `${names.join(', ')} (${status})`).join(', ');
}

/** The error table of docs/api.md: every code, its status, title and when it is answered. */
export function errorTable(): string {
  const rows = Object.entries(ERRORS).map(
    ([code, { status, title, when }]) => `| \`${code}\` | ${status} | ${title} | ${when} |`,
  );
  return ['| code | status | title | when |', '|---|---|---|---|', ...rows].join('\n');
}
