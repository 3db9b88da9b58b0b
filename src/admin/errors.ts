import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { POSTGRES_DEADLOCK, POSTGRES_STATEMENT_TIMEOUT } from '../db/unavailable.ts';
import { answerError, sendProblem } from '../http/error-handler.ts';
import { ApiError, RETRY_AFTER_UNAVAILABLE_SECONDS } from '../http/errors.ts';
import { ImportError } from '../import/import-error.ts';
import { ERROR_MESSAGE_KEYWORD } from '../schemas/common.ts';
import type { ParameterError } from '../schemas/problems.ts';
import { ServiceError } from '../services/errors.ts';
import { undecodableBody } from './request-encoding.ts';

/** The problems only the admin listener answers, from the same registry as the API's. */

export const adminUnauthenticated = () =>
  new ApiError(
    'unauthenticated',
    'A valid admin token is required: send Authorization: Bearer <ADMIN_TOKEN>.',
    { headers: { 'www-authenticate': 'Bearer realm="admin"' } },
  );

export const tooManyFailedLogins = (retryAfterSeconds: number) =>
  new ApiError(
    'rate_limited',
    `Too many failed admin tokens from this address; retry after ${retryAfterSeconds} seconds.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );

/** A method a path of the admin listener does not take, with those it does (`allow`). */
export const adminMethodNotAllowed = (allow: string) =>
  new ApiError('method_not_allowed', `This path takes ${allow} only.`, { headers: { allow } });

/** The NDJSON import's first bad line, as the CLI says it: `line N: field: problem`. */
export const importFailed = (error: ImportError) =>
  new ApiError('import_failed', `${error.message}; nothing was imported.`, {
    errors: [{ line: error.line, field: error.field, message: error.problem }],
  });

/**
 * A change that met another writer: SQLite's one writer at a time past the busy timeout, a
 * PostgreSQL statement past its timeout (what an import holding the company's rows causes: a
 * change's own statements are quick), a deadlock between two imports. Nothing was changed, and
 * the generic "temporarily unavailable" said nothing of why.
 */
function writeConflict(error: unknown, request: FastifyRequest): ApiError | null {
  if (request.method !== 'POST') return null;
  const code = (error as { code?: unknown }).code;
  const detail =
    code === 'SQLITE_BUSY'
      ? 'Another import or command is writing to this SQLite database, which takes one writer at a time; nothing was changed: retry when it has finished.'
      : code === POSTGRES_STATEMENT_TIMEOUT
        ? 'A statement did not finish within DATABASE_STATEMENT_TIMEOUT_MS: another import or command holds rows this change needs until it commits (an import of the same company), or the database is slow or not answering; nothing was changed: retry when that import has finished.'
        : code === POSTGRES_DEADLOCK
          ? 'Another import or command wrote some of the same rows at the same time (a deadlock), and this change was undone; nothing was changed: retry.'
          : null;
  if (detail === null) return null;
  return new ApiError('service_unavailable', detail, {
    headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
  });
}

export const ndjsonExpected = () =>
  new ApiError(
    'unsupported_media_type',
    'Send the records as the body, with Content-Type: application/x-ndjson.',
  );

/** A JSON request body that cannot be read: its bytes are not UTF-8, or its text not JSON. */
export const unreadableJsonBody = (why: 'not UTF-8' | 'not valid JSON') =>
  new ApiError('bad_request', `The request body is ${why}: send a JSON object encoded as UTF-8.`);

/** One 422 naming every bad field of a JSON request body. */
export const invalidBody = (errors: ParameterError[]) =>
  new ApiError(
    'validation_failed',
    `Invalid request body field${errors.length > 1 ? 's' : ''}: ${errors.map((e) => e.parameter).join(', ')}.`,
    { errors },
  );

/**
 * A path id (plain digits, as its schema takes them) as a number. One past 2^53 − 1 names no
 * company or key: its not-found names the text sent, not the number it would round to.
 */
export function pathId(text: string, notFound: (id: string) => ServiceError): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id)) throw notFound(text);
  return id;
}

function serviceProblem(error: ServiceError): ApiError {
  if (error.kind === 'not_found') return new ApiError('not_found', `${error.message}.`);
  return invalidBody([{ parameter: error.field ?? '(body)', message: error.message }]);
}

/**
 * For an operation that declares no body (activate, deactivate, revoke): none, or an empty JSON
 * object, is taken; any field is refused as a field the body does not declare, as the others' are.
 */
export async function refuseUndeclaredBody(request: FastifyRequest): Promise<void> {
  const { body } = request;
  // No body at all; a JSON `null` is a body, and not `{}`.
  if (body === undefined) return;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidBody([
      { parameter: '(body)', message: 'must be empty: this operation takes none' },
    ]);
  }
  const fields = Object.keys(body);
  if (fields.length > 0) {
    throw invalidBody(
      fields.map((parameter) => ({ parameter, message: 'is not a field of this body' })),
    );
  }
}

/** One entry per bad field, with the message its schema declares (`says`) when it does one. */
function bodyErrors(error: FastifyError, request: FastifyRequest): ParameterError[] {
  const schema = request.routeOptions.schema?.body as
    | { properties?: Record<string, Record<string, unknown>> }
    | undefined;
  const seen = new Map<string, string>();
  for (const issue of error.validation ?? []) {
    const params = issue.params as { missingProperty?: string; additionalProperty?: string };
    const field =
      issue.instancePath.replace(/^\//, '').split('/')[0] ||
      params.missingProperty ||
      params.additionalProperty ||
      '(body)';
    const declared = schema?.properties?.[field]?.[ERROR_MESSAGE_KEYWORD];
    const message = params.additionalProperty
      ? 'is not a field of this body'
      : params.missingProperty || typeof declared !== 'string'
        ? issue.message
        : declared;
    if (!seen.has(field)) seen.set(field, message ?? 'is invalid');
  }
  return [...seen].map(([parameter, message]) => ({ parameter, message }));
}

/** The admin listener's errors: its own problems first, then the API's handler. */
export function answerAdminError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const unknown = error as unknown;
  if (unknown instanceof ServiceError) return sendProblem(reply, serviceProblem(unknown));
  if (unknown instanceof ImportError) return sendProblem(reply, importFailed(unknown));
  const undecodable = undecodableBody(error, request);
  if (undecodable) return sendProblem(reply, undecodable);
  if (error.validation && error.validationContext === 'body') {
    return sendProblem(reply, invalidBody(bodyErrors(error, request)));
  }
  const conflict = writeConflict(error, request);
  if (conflict) {
    request.log.warn({ err: error }, 'a change met another writer');
    return sendProblem(reply, conflict);
  }
  return answerError(error, request, reply);
}
