import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_MESSAGE_KEYWORD } from '../schemas/common.ts';
import { protocolProblem } from './client-errors.ts';
import {
  ApiError,
  type ErrorCode,
  type ParameterError,
  PROBLEM_CONTENT_TYPE,
  problem,
} from './errors.ts';
import { queryValueErrors } from './params.ts';

// Connection-level failures: the database is down, restarting or out of connections, a
// statement ran past its timeout, or the server did not answer at all (pg's query_timeout:
// "Query read timeout"). The request may succeed later; it is not the client's fault.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  '57014', // query_canceled: statement timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|driver has already been destroyed|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(
      message,
    )
  );
}

function sendProblem(
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  errors?: ParameterError[],
) {
  const body = problem(code, detail, errors);
  return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
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
    const declared = schema?.properties?.[parameter]?.[ERROR_MESSAGE_KEYWORD];
    seen.set(parameter, typeof declared === 'string' ? declared : (issue.message ?? 'is invalid'));
  }
  const errors = [...seen].map(([parameter, message]) => ({ parameter, message }));
  // Only parameters the route declares: any other is ignored, whatever its value.
  const valueErrors = queryValueErrors(request.query).filter(
    (e) => schema?.properties?.[e.parameter] && !seen.has(e.parameter),
  );
  return [...errors, ...valueErrors];
}

/** Every error becomes problem+json; 5xx details stay in the log, never in the body. */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      reply.headers(error.headers);
      return sendProblem(reply, error.code, error.detail, error.errors);
    }
    if (error.validation) {
      // A malformed path id cannot name a record: the same 404 as an id that does not exist.
      if (error.validationContext === 'params') {
        return sendProblem(reply, 'not_found', 'No record with this id exists.');
      }
      const errors = parameterErrors(request, error);
      return sendProblem(
        reply,
        'validation_failed',
        `Invalid query parameter${errors.length > 1 ? 's' : ''}: ${errors.map((e) => e.parameter).join(', ')}.`,
        errors,
      );
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_SECONDS));
      return sendProblem(
        reply,
        'service_unavailable',
        'The service is temporarily unavailable; retry shortly.',
      );
    }
    const status = error.statusCode ?? 500;
    if (status === 404 || error.code === 'FST_ERR_BAD_URL') {
      return sendProblem(reply, 'not_found', 'No such resource.');
    }
    if (status >= 400 && status < 500) {
      request.log.debug({ code: error.code, status }, 'client error');
      const body = protocolProblem(status);
      return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, 'internal_error', 'An internal error occurred; it has been logged.');
  });

  app.setNotFoundHandler((_request, reply) => sendProblem(reply, 'not_found', 'No such resource.'));
}
