import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, isPermissionDenied, isSchemaMissing } from '../db/unavailable.ts';
import { ERROR_MESSAGE_KEYWORD } from '../schemas/common.ts';
import { type ParameterError, PROBLEM_CONTENT_TYPE } from '../schemas/problems.ts';
import { protocolProblem } from './client-errors.ts';
import {
  ApiError,
  ClientGoneError,
  databaseUnavailable,
  internalError,
  noSuchResource,
  recordNotFound,
  validationFailed,
} from './errors.ts';
import { queryValueErrors, updatedSinceFormatMessage } from './params.ts';

export function sendProblem(reply: FastifyReply, error: ApiError) {
  const body = error.toProblem();
  return reply.headers(error.headers).status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

/** One 422 entry per bad query parameter, with the message its schema declares. */
function parameterErrors(request: FastifyRequest, error: FastifyError): ParameterError[] {
  const schema = request.routeOptions.schema?.querystring as
    | { properties?: Record<string, Record<string, unknown>> }
    | undefined;
  const seen = new Map<string, string>();
  for (const issue of error.validation ?? []) {
    const parameter =
      issue.instancePath.replace(/^\//, '').split('/')[0] ||
      String((issue.params as { missingProperty?: string }).missingProperty ?? '(query)');
    if (seen.has(parameter)) continue;
    // A repeated parameter arrives as a list, which no schema of one value takes.
    const value = (request.query as Record<string, unknown> | undefined)?.[parameter];
    if (Array.isArray(value)) {
      seen.set(parameter, `must be given once, not ${value.length} times`);
      continue;
    }
    const declared =
      parameter === 'updated_since'
        ? updatedSinceFormatMessage(value)
        : schema?.properties?.[parameter]?.[ERROR_MESSAGE_KEYWORD];
    seen.set(parameter, typeof declared === 'string' ? declared : (issue.message ?? 'is invalid'));
  }
  const errors = [...seen].map(([parameter, message]) => ({ parameter, message }));
  // Only parameters the route declares: any other is ignored, whatever its value.
  const valueErrors = queryValueErrors(request).filter(
    (e) => schema?.properties?.[e.parameter] && !seen.has(e.parameter),
  );
  return [...errors, ...valueErrors];
}

/** Every error becomes problem+json; 5xx details stay in the log, never in the body. */
export function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) return sendProblem(reply, error);
  if (error instanceof ClientGoneError) {
    reply.hijack();
    return reply;
  }
  if (error.validation) {
    // A malformed path id cannot name a record: the same 404 as an id that does not exist.
    if (error.validationContext === 'params') return sendProblem(reply, recordNotFound());
    return sendProblem(reply, validationFailed(parameterErrors(request, error)));
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable');
    return sendProblem(reply, databaseUnavailable());
  }
  if (isSchemaMissing(error)) {
    request.log.error(
      { err: error },
      'the database has lost its tables (recreated or restored empty?): run cdapi migrate or restore it',
    );
    return sendProblem(reply, databaseUnavailable());
  }
  if (isPermissionDenied(error)) {
    request.log.error(
      { err: error },
      "the database does not let the service's login read a table: grant it SELECT (a replica's role, docs/production.md)",
    );
    return sendProblem(reply, databaseUnavailable());
  }
  const status = error.statusCode ?? 500;
  // The static files' plugin answers 403 for a path that leaves the folder (a `..` segment)
  // and for a name it cannot check against it (a NUL, one too long for the file system): all of
  // them name no file of the reference page, the 404 of an unknown path.
  if (
    status === 404 ||
    error.code === 'FST_ERR_BAD_URL' ||
    error.code === 'FST_STATIC_FORBIDDEN_PATH'
  ) {
    return sendProblem(reply, noSuchResource());
  }
  if (status >= 400 && status < 500) {
    request.log.debug({ code: error.code, status }, 'client error');
    const body = protocolProblem(status);
    // A range past the end of a static file says how long the file is (RFC 9110 §15.5.17),
    // as the plugin that refused it wrote it.
    const range = (error as { headers?: Record<string, unknown> }).headers?.['Content-Range'];
    if (status === 416 && typeof range === 'string') reply.header('content-range', range);
    return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
  }
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, internalError());
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, noSuchResource()));
}
