import { randomUUID } from 'node:crypto';
import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, type Problem, problem } from '../schemas/problems.ts';
import { type ApiError, methodNotAllowed, noSuchResource } from './errors.ts';

/**
 * Answers for requests that never reach a route, or that the framework refuses before one
 * runs, so that even these are problem+json: Fastify's own answers are plain JSON, and its
 * 414 echoes the path.
 */

/**
 * The client errors HTTP itself defines, as Node (bytes that are not HTTP, timeouts, oversized
 * headers) or the framework and its plugins (the static files of /docs: a path out of their
 * folder, a failed If-Match, a range past the end; a Content-Encoding no one decodes) answer
 * them: each with a code of its own and a fixed detail that repeats nothing the client sent.
 */
const PROTOCOL_ERRORS: Record<number, Problem> = {
  400: problem('bad_request', 'The request is not valid HTTP.'),
  403: problem('forbidden', 'This resource may not be read.'),
  404: noSuchResource().toProblem(),
  405: methodNotAllowed().toProblem(),
  408: problem('request_timeout', 'The request did not arrive in time.'),
  412: problem(
    'precondition_failed',
    'A precondition of the request (If-Match, If-Unmodified-Since) does not hold.',
  ),
  413: problem('content_too_large', 'The request body is too large.'),
  414: problem('uri_too_long', 'The request target is too long.'),
  415: problem(
    'unsupported_media_type',
    'The Content-Type or Content-Encoding of the request is not supported.',
  ),
  416: problem('range_not_satisfiable', 'The requested range lies outside the file.'),
  431: problem('headers_too_large', 'The request line and headers are too large.'),
};

/** The answer to a client error of `status`; any status not listed above is a 400. */
export function protocolProblem(status: number): Problem {
  return { ...(PROTOCOL_ERRORS[status] ?? PROTOCOL_ERRORS[400]) } as Problem;
}

/**
 * The router's errors (Fastify's `frameworkErrors`): a path that does not decode as UTF-8, or a
 * segment longer than any id can be. Neither can name a record: the 404 of an unknown path.
 */
export function answerRouterError(_error: unknown, _request: unknown, reply: FastifyReply): void {
  reply.status(404).type(PROBLEM_CONTENT_TYPE).send(noSuchResource().toProblem());
}

/** `answerRouterError`, unless `refuse` finds the request refused for another reason first. */
export function answerRouterErrorUnless(refuse: (request: FastifyRequest) => ApiError | null) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    const refused = refuse(request);
    if (refused) reply.status(refused.status).type(PROBLEM_CONTENT_TYPE).send(refused.toProblem());
    else answerRouterError(error, request, reply);
  };
}

/**
 * Node's `clientError`: bytes that are not HTTP, a request line and headers over the size limit,
 * or a request that did not arrive within the timeouts. Answered with problem+json, then the
 * connection is closed. Only the error's code is logged: the error carries the raw bytes
 * received, Authorization header and all.
 */
export function answerClientError(
  this: FastifyInstance,
  error: NodeJS.ErrnoException,
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 408
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : 400;
  this.log.debug({ code: error.code, status }, 'client error');
  // A response already under way on this connection (pipelining) must not be cut into.
  const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const body = JSON.stringify(protocolProblem(status));
    // The headers every answer carries: a request id (the request's own was not read) and nosniff.
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** How long a CONNECT's answer may take to leave, when the server sets no request timeout. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * Requests Node keeps from the routes unless told otherwise, routed like any other:
 * - CONNECT goes to the server's `connect` listeners with the bare socket (and without one the
 *   connection is closed unanswered). Answered 405 on a known path and 404 elsewhere, then the
 *   connection is closed: nothing is ever tunnelled. The socket comes without the server's
 *   error and timeout handling, so it gets its own: a client that resets it must not take the
 *   process down, nor one that stops reading hold it.
 * - Node answers an `Expect` other than 100-continue with a bare 417. HTTP lets a server
 *   ignore an expectation it does not meet: the request is answered as it would be without.
 */
export function routeEveryRequest(app: FastifyInstance): void {
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(app.server.requestTimeout || CONNECT_TIMEOUT_MS, () => socket.destroy());
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on('finish', () => socket.end());
    app.routing(request, response);
  });
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    app.routing(request, response),
  );
}
