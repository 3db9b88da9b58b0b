/**
 * Every error the API answers, once: code, HTTP status and title. Bodies are RFC 9457
 * problem details (`application/problem+json`) built by `problem()`.
 */
export const ERRORS = {
  bad_request: { status: 400, title: 'Bad request' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  company_inactive: { status: 403, title: 'Company inactive' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  invalid_signature: { status: 403, title: 'Invalid signature' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  receipt_not_found: { status: 404, title: 'Receipt not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  content_too_large: { status: 413, title: 'Content too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ParameterError {
  parameter: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: ParameterError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** Problem types point at the error's entry on the service's own reference page. */
const TYPE_BASE = '/docs#error-';

export function problem(code: ErrorCode, detail: string, errors?: ParameterError[]): Problem {
  const { status, title } = ERRORS[code];
  return {
    type: `${TYPE_BASE}${code}`,
    title,
    status,
    detail,
    code,
    ...(errors ? { errors } : {}),
  };
}

/** Thrown anywhere in a request; the error handler turns it into its problem+json answer. */
export class ApiError extends Error {
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: { errors?: ParameterError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  readonly errors: ParameterError[] | undefined;

  get status(): number {
    return ERRORS[this.code].status;
  }

  toProblem(): Problem {
    return problem(this.code, this.detail, this.errors);
  }
}

/** The one 404 body for a record that is absent or another company's: byte-for-byte the same. */
export const recordNotFound = () => new ApiError('not_found', 'No record with this id exists.');
