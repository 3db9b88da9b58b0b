import type { LostCursor } from '../db/changes.queries.ts';
import type { Scope } from '../keys/scopes.ts';
import {
  ERRORS,
  type ErrorCode,
  type ParameterError,
  type Problem,
  type ProblemErrors,
  problem,
} from '../schemas/problems.ts';

/** Thrown anywhere in a request; the error handler turns it into its problem+json answer. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: ProblemErrors; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.code = code;
    this.detail = detail;
    this.name = 'ApiError';
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  readonly errors: ProblemErrors | undefined;

  get status(): number {
    return ERRORS[this.code].status;
  }

  toProblem(): Problem {
    return problem(this.code, this.detail, this.errors);
  }
}

/*
 * The problems the service answers, each written once: the auth check, the routes and the
 * error handler throw them, and the API description shows them as its examples.
 */

export const unauthenticated = () =>
  new ApiError(
    'unauthenticated',
    'A valid API key is required: send Authorization: Bearer <key>.',
    { headers: { 'www-authenticate': 'Bearer' } },
  );

/** A key's company, or a signed receipt URL's (which no key comes with). */
export const companyInactive = (of: 'key' | 'receipt' = 'key') =>
  new ApiError('company_inactive', `The company this ${of} belongs to is inactive.`);

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError('rate_limited', `Rate limit exceeded; retry after ${retryAfterSeconds} seconds.`);

export const insufficientScope = (scope: Scope) =>
  new ApiError('insufficient_scope', `This operation needs the scope ${scope}.`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });

/** The one 404 body for a record that is absent or another company's: byte-for-byte the same. */
export const recordNotFound = () => new ApiError('not_found', 'No record with this id exists.');

/** A path no route serves. */
export const noSuchResource = () => new ApiError('not_found', 'No such resource.');

export const methodNotAllowed = () =>
  new ApiError('method_not_allowed', 'This API is read-only: only GET and HEAD are allowed.', {
    headers: { allow: 'GET, HEAD' },
  });

/** One 422 naming every bad query parameter, each with its message. */
export const validationFailed = (errors: ParameterError[]) =>
  new ApiError(
    'validation_failed',
    `Invalid query parameter${errors.length > 1 ? 's' : ''}: ${errors.map((e) => e.parameter).join(', ')}.`,
    { errors },
  );

export const cursorExpired = (lost: LostCursor = 'forgotten') =>
  new ApiError(
    'cursor_expired',
    lost === 'forgotten'
      ? 'The change feed has forgotten a deletion after this cursor (older than CHANGES_RETENTION_DAYS, or the company was purged since); read the feed again from the beginning (without after).'
      : 'This cursor is from an import the change feed does not hold: its data was restored from a copy older than the cursor (or this service never gave it); read the feed again from the beginning (without after).',
  );

/**
 * A Host (a trusted proxy's X-Forwarded-Host or -Proto, an absolute-form target's host) from
 * which no URL can be built.
 */
export const unusableHost = (
  part: 'host' | 'target' | 'missing' | 'several' | 'scheme' | 'version' | 'fragment',
) =>
  new ApiError(
    'bad_request',
    {
      host: 'The Host header (or X-Forwarded-Host) is not a host name or IP address with an optional port.',
      target:
        'The host of the request-target (absolute form) is not a host name or IP address with an optional port.',
      missing: 'An HTTP/1.1 request must carry a Host header.',
      several: 'A request must carry one Host header, not several.',
      scheme: 'X-Forwarded-Proto is neither http nor https.',
      version: 'The request line must end in HTTP/1.0 or HTTP/1.1.',
      fragment:
        'A request-target carries no fragment: leave out the # and what follows it, or send a # in a value as %23.',
    }[part],
  );

export const receiptNotFound = () =>
  new ApiError('receipt_not_found', 'This expense has no receipt image.');

export const invalidSignature = () =>
  new ApiError(
    'invalid_signature',
    'The receipt link is invalid or has expired; request a new one.',
  );

export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/** The database failed at the connection level; the request may succeed later. */
export const databaseUnavailable = () =>
  new ApiError('service_unavailable', 'The service is temporarily unavailable; retry shortly.', {
    headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
  });

/** `/readyz` without a database: `label` names the one that failed. */
export const databaseUnreachable = (label: string) =>
  new ApiError('service_unavailable', `${label} is not reachable.`, {
    headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
  });

/** `/readyz` with a database that lacks this version's schema (recreated empty, or behind). */
export const databaseWithoutSchema = (label: string) =>
  new ApiError(
    'service_unavailable',
    `${label} does not hold this version's schema (recreated or restored empty, or behind): run cdapi migrate or restore it.`,
    { headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) } },
  );

/** `/readyz` with a database whose login may not read every table (the log names them). */
export const databaseUnreadable = (label: string) =>
  new ApiError(
    'service_unavailable',
    `${label} does not let the service's login read some of its tables: grant it SELECT on them.`,
    { headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) } },
  );

/** The instance has as many requests waiting as it may (see admission.ts). */
export const busy = () =>
  new ApiError('service_unavailable', 'The service is busy; retry shortly.', {
    headers: { 'retry-after': '1' },
  });

/** The company's data changed under every read of the answer (see `readWithinOneVersion`). */
export const dataKeptChanging = () =>
  new ApiError(
    'service_unavailable',
    "The company's data changed while the answer was read, each time it was read; retry shortly.",
    { headers: { 'retry-after': '1' } },
  );

export const internalError = () =>
  new ApiError('internal_error', 'An internal error occurred; it has been logged.');

/**
 * Thrown for a request whose client hung up before it was served (it gave its place in the
 * queue away): there is no one to answer, and its `request aborted by the client` line says
 * what happened, so it is neither answered nor logged as a failure.
 */
export class ClientGoneError extends Error {}
