/**
 * Every error the API answers, once: code, HTTP status and title. Bodies are RFC 9457
 * problem details (`application/problem+json`) built by `problem()`; the named problems the
 * service throws are in src/http/errors.ts.
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

/** Every error code, grouped by status: `unauthenticated (401), company_inactive, … (403), …`. */
export function errorCodesByStatus(): string {
  const codes = new Map<number, string[]>();
  for (const [code, { status }] of Object.entries(ERRORS)) {
    codes.set(status, [...(codes.get(status) ?? []), code]);
  }
  return [...codes].map(([status, names]) => `${names.join(', ')} (${status})`).join(', ');
}
