import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PROBLEM_CONTENT_TYPE, type Problem, problem } from './errors.ts';

/**
 * Answers for requests that never reach a route, so that even these are problem+json:
 * Fastify's own answers are plain JSON, and its 414 echoes the path.
 */

/** A 4xx that HTTP itself defines (400, 408, 431): its own title, the code of any bad input. */
function protocolProblem(status: number, detail: string): Problem {
  return {
    ...problem('validation_failed', detail),
    title: STATUS_CODES[status] ?? 'Client error',
    status,
  };
}

/**
 * The router's errors (Fastify's `frameworkErrors`): a path that does not decode as UTF-8, or a
 * segment longer than any id can be. Neither can name a record: the 404 of an unknown path.
 */
export function answerRouterError(_error: unknown, _request: unknown, reply: FastifyReply): void {
  reply.status(404).type(PROBLEM_CONTENT_TYPE).send(problem('not_found', 'No such resource.'));
}

const CLIENT_ERROR_DETAILS: Record<number, string> = {
  400: 'The request is not valid HTTP.',
  408: 'The request did not arrive in time.',
  431: 'The request line and headers are too large.',
};

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
    const body = JSON.stringify(protocolProblem(status, CLIENT_ERROR_DETAILS[status] ?? ''));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Requests Node keeps from the routes unless told otherwise, routed like any other:
 * - CONNECT goes to the server's `connect` listeners with the bare socket (and without one the
 *   connection is closed unanswered). Answered 405 on a known path and 404 elsewhere, then the
 *   connection is closed: nothing is ever tunnelled.
 * - An `Expect` other than 100-continue is answered 417 with no body. HTTP lets a server
 *   ignore an expectation it does not meet; the request is answered as it would be without.
 */
export function routeEveryRequest(app: FastifyInstance): void {
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
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
