import type { Problem } from './types.ts';

/** One bad query parameter of a 422 `validation_failed`. */
export type ParameterError = NonNullable<Problem['errors']>[number];

/**
 * An answer of the API that is not a success: the problem+json body's fields, the HTTP status
 * and the `X-Request-Id` to quote when asking the operator about it.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors: ParameterError[] | undefined;
  readonly requestId: string | undefined;

  constructor(fields: {
    status: number;
    code: string;
    detail: string;
    errors?: ParameterError[] | undefined;
    requestId?: string | undefined;
  }) {
    super(`${fields.status} ${fields.code}: ${fields.detail}`);
    this.status = fields.status;
    this.code = fields.code;
    this.detail = fields.detail;
    this.errors = fields.errors;
    this.requestId = fields.requestId;
  }
}

/** Builds the ApiError of a failed response, whether or not its body is problem+json. */
export async function apiErrorOf(response: Response, note?: string): Promise<ApiError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const text = await response.text();
  let body: { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, say): the status alone tells what happened.
  }
  const detail =
    typeof body.detail === 'string'
      ? body.detail
      : typeof body.title === 'string'
        ? body.title
        : response.statusText || text.slice(0, 200);
  return new ApiError({
    status: response.status,
    code: typeof body.code === 'string' ? body.code : `http_${response.status}`,
    detail: note === undefined ? detail : `${detail} (${note})`,
    errors: Array.isArray(body.errors) ? (body.errors as ParameterError[]) : undefined,
    requestId,
  });
}

/**
 * A receipt's signed URL answered 200 with bytes that are not the image asked for: no image at
 * all (a proxy's or captive portal's page: `incomplete` false, not asked again), or one that
 * stops short of its end where HTTP could not tell (`incomplete` true: asked again, as a body
 * cut short is).
 */
export class ReceiptError extends Error {
  override readonly name = 'ReceiptError';
  readonly incomplete: boolean;

  constructor(message: string, incomplete: boolean) {
    super(message);
    this.incomplete = incomplete;
  }
}
