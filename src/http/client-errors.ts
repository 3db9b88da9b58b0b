import { randomUUID } from 'node:crypto';
import {
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, type Problem, problem } from '../schemas/problems.ts';
import { ABSOLUTE_FORM, targetProblem } from './deps.ts';
import { ApiError, methodNotAllowed, noSuchResource } from './errors.ts';

/**
 * Answers for requests that never reach a route, or that the framework refuses before one
 * runs, so that even these are problem+json: Fastify's own answers are plain JSON, and its
 * 414 echoes the path.
 */

/**
 * The client errors HTTP itself defines, as Node (bytes that are not HTTP, timeouts, oversized
 * headers) or the framework and its plugins (the static files of /docs: a failed If-Match, a
 * range past the end; a Content-Encoding no one decodes) answer them: each with a code of its
 * own and a fixed detail that repeats nothing the client sent.
 */
const PROTOCOL_ERRORS: Record<number, Problem> = {
  400: problem('bad_request', 'The request is not valid HTTP.'),
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
 * The status of a client error Node reports (as its own handler answers it): a request that did
 * not arrive in time 408, a request line and headers over the limit 431, anything else 400.
 */
export const parserErrorStatus = (code: string | undefined): 400 | 408 | 431 =>
  code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;

/** The parser's error, with the bytes it was reading and how far into them it failed. */
type ParserError = NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: number };

/**
 * A request line whose method is a token (RFC 9110 §5.6.2), its target and an HTTP/1 version.
 * Node's parser knows a fixed list of methods (GET, PROPFIND, QUERY, …) and fails on any other
 * at its first letter that no known method has.
 */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\S+) HTTP\/1\.[01]\r?\n/;

/**
 * The path of a request-target, up to its query or a `#`, as the router reads it, with its
 * percent-escapes checked as the router checks them; null where the router would find no path
 * (`*`, escapes that are not UTF-8, an absolute form without a host): the 404 of an unknown path.
 */
function pathOf(target: string): string | null {
  const absolute = ABSOLUTE_FORM.exec(target);
  if (absolute?.[1] === '') return null;
  const path = target.startsWith('/') ? target : absolute?.[2]?.replace(/^$/, '/');
  if (!path?.startsWith('/')) return null;
  const end = path.search(/[?#]/);
  const routed = end < 0 ? path : path.slice(0, end);
  try {
    decodeURIComponent(routed);
    return routed;
  } catch {
    return null;
  }
}

/** The path the router is given for a target whose path it cannot decode: no route takes it. */
const UNDECODABLE_PATH = '/(undecodable)';

/**
 * The router's options on every listener, so that no request gets the router's own 404
 * (`frameworkErrors`), which passes none of the hooks every answer does (its request id,
 * `Cache-Control`, its log line, its metric): a target in origin form whose path's percent-escapes
 * are not UTF-8 is routed as a path no route takes (the 404 of an unknown path), and a path
 * parameter may be as long as a request line (a 101-digit id is a 404 of its route).
 */
export const ROUTER_OPTIONS = {
  rewriteUrl: (request: IncomingMessage): string => {
    const url = request.url ?? '/';
    return url.startsWith('/') && pathOf(url) === null ? UNDECODABLE_PATH : url;
  },
  routerOptions: { maxParamLength: maxHeaderSize },
};

/**
 * What a listener answers a method Node's parser does not know on `target`, whose path (null:
 * none the router finds) is `path`: the 405 of the methods that path takes, a 400 the listener
 * answers any method for that target, or null where no route is made for it (404).
 */
export type UnknownMethodRefusal = (
  app: FastifyInstance,
  path: string | null,
  target: string,
) => ApiError | null;

/**
 * The API's: a target it answers 400 by any method (a `#`, an absolute form without a host),
 * else every path it routes takes GET and HEAD alone.
 */
export const readOnlyRefusal: UnknownMethodRefusal = (app, path, target) =>
  targetProblem(target) ??
  (path !== null && app.findRoute({ method: 'GET', url: path }) ? methodNotAllowed() : null);

/**
 * The refusal of a method Node's parser does not know (`FOO /api/company/v1/leaves`), as
 * `refusalOn` says for its path; a 404 on a path no route is made for; a 400 when the request
 * line is not whole in the bytes received or is not HTTP.
 */
function unknownMethodRefusal(
  app: FastifyInstance,
  error: ParserError,
  refusalOn: UnknownMethodRefusal,
): ApiError | 400 | 404 {
  const { rawPacket: received, bytesParsed } = error;
  if (!Buffer.isBuffer(received) || bytesParsed === undefined) return 400;
  // Requests before this one on the connection may share the bytes (pipelining).
  const start = bytesParsed > 0 ? received.lastIndexOf(0x0a, bytesParsed - 1) + 1 : 0;
  const end = received.indexOf(0x0a, start);
  if (end < 0) return 400;
  const line = REQUEST_LINE.exec(received.toString('latin1', start, end + 1));
  if (!line) return 400;
  const target = line[1] as string;
  return refusalOn(app, pathOf(target), target) ?? 404;
}

/**
 * The 400 of a request target holding a byte that is not ASCII (`?search=straße` sent as it is
 * typed, as curl does), which Node's parser refuses: it says how to send it instead. Null for
 * any other error.
 */
function nonAsciiTarget({ code, rawPacket: received, bytesParsed }: ParserError): ApiError | null {
  if (code !== 'HPE_INVALID_URL' || !Buffer.isBuffer(received) || bytesParsed === undefined) {
    return null;
  }
  if ((received[bytesParsed] ?? 0) < 0x80) return null;
  return new ApiError(
    'bad_request',
    'The request target holds characters that are not ASCII: percent-encode them as UTF-8 (search=stra%C3%9Fe for straße).',
  );
}

/**
 * The connections whose client error is answered already, or whose answer waits for an earlier
 * request's: Node's parser reports the same error again for every chunk that arrives after it.
 */
const answered = new WeakSet<Socket>();

/** The response to the latest request read on a connection (`trackLatestResponses` keeps it). */
const LATEST_RESPONSE = Symbol('latest response');
type ReadingSocket = Socket & { [LATEST_RESPONSE]?: ServerResponse };

const REQUEST_ID = Symbol('request id');
type IdentifiedRequest = IncomingMessage & { [REQUEST_ID]?: string };

/**
 * Keeps the id the listener gave `request` (its `genReqId` returns this), for a refusal that
 * answers the request in place of its route.
 */
export function rememberRequestId(request: IncomingMessage, id: string): string {
  (request as IdentifiedRequest)[REQUEST_ID] = id;
  return id;
}

const idOf = (request: IncomingMessage) => (request as IdentifiedRequest)[REQUEST_ID];

/** Notes `response` as the answer to the latest request read on its connection, `socket`. */
export function noteLatestResponse(socket: Socket, response: ServerResponse): void {
  (socket as ReadingSocket)[LATEST_RESPONSE] = response;
}

/** The answer to the latest request read on `socket` (`trackLatestResponses`), if any. */
export const latestResponseOf = (socket: Socket): ServerResponse | undefined =>
  (socket as ReadingSocket)[LATEST_RESPONSE];

/**
 * Has `server` note the answer to the latest request read on each connection: Node emits a
 * request as soon as its head is read, before the answers of those read earlier on the
 * connection (pipelining) have left, so the latest one's answer is the last to leave, and a
 * refusal of what follows waits for it.
 */
export function trackLatestResponses(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) =>
    noteLatestResponse(request.socket, response),
  );
}

/**
 * Node's `clientError`: bytes that are not HTTP, a method its parser does not know, a request
 * line and headers over the size limit, a body whose chunked framing is broken, or a request
 * that did not arrive within the timeouts. Answered with problem+json, then the connection is
 * closed. Logged as a request line with the error's code alone (the error carries the raw
 * bytes received, Authorization header and all), and told to `onRefused` (a metric), unless the
 * request's head was read: then its own line says how it ended. An unknown method on a known
 * path gets `refusalOn`'s 405, with the methods that path takes.
 *
 * Requests read before the refused one on the same connection (pipelining) are answered first,
 * each whole: Node queues their answers behind the one being written, so the refusal waits for
 * the latest request's answer, which leaves last.
 */
export const answerClientErrors = (
  refusalOn: UnknownMethodRefusal,
  onRefused?: (status: number) => void,
) =>
  function answerClientError(this: FastifyInstance, error: ParserError, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const refusal =
      error.code === 'HPE_INVALID_METHOD'
        ? unknownMethodRefusal(this, error, refusalOn)
        : (nonAsciiTarget(error) ?? parserErrorStatus(error.code));
    const status = typeof refusal === 'number' ? refusal : refusal.status;
    const latest = latestResponseOf(socket);
    const reading = latest?.req;
    /** Answers `status` and ends the connection, then calls `then`. */
    const refuse = (then: () => void, its?: IncomingMessage) => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      // A request whose head was read keeps its id, and its own line says how it ended
      // (`logEachRequest`). Any other gets one line, at the level of every other request's,
      // with the id its answer carries: the route is not known, nor logged.
      const requestId = (its && idOf(its)) ?? randomUUID();
      if (!its) {
        this.log.info(
          { reqId: requestId, route: '(not parsed)', status, code: error.code },
          'request',
        );
        onRefused?.(status);
      }
      const body = JSON.stringify(
        typeof refusal === 'number' ? protocolProblem(status) : refusal.toProblem(),
      );
      const allowed = typeof refusal === 'number' ? undefined : refusal.headers.allow;
      const allow = allowed === undefined ? '' : `Allow: ${allowed}\r\n`;
      // The headers every error answer carries: its date (RFC 9110 §6.6.1), the type with its
      // charset, no-store, a request id and nosniff. Once the connection's end is sent, no
      // other answer can be written to it.
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\n` +
          `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\nCache-Control: no-store\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n${allow}X-Request-Id: ${requestId}\r\n` +
          `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
        then,
      );
    };
    if (!reading || reading.complete) {
      // The refused request is one whose head was not read: it is refused once the answers
      // before it have left.
      const refuseNow = () => refuse(() => socket.destroy());
      if (latest && !latest.writableFinished) latest.once('close', refuseNow);
      else refuseNow();
      return;
    }
    // The body of the latest request stopped arriving (the client closed its side of the
    // connection, or sent too slowly) or broke its framing: its answer is the last on this
    // connection. Answered already (its route did not wait for its body), it gets no other.
    if (latest.writableFinished) {
      socket.destroy();
      return;
    }
    // The route reading it (an admin import) is told, and rolls back, instead of waiting for
    // the rest for ever; telling it closes the connection. The error is a new one: the
    // parser's carries the raw bytes received, Authorization header and all.
    const cutShort = () => {
      reading.destroy(bodyCutShort(status));
      socket.destroy();
    };
    // A body that timed out gets no answer: its client is not sending, nor likely reading.
    if (status === 408) {
      cutShort();
      return;
    }
    // A broken body: once the answers before it have left, the request is refused in place of
    // its route's answer, unless that answer has begun to leave already (then the connection
    // is closed after it).
    const whenItsTurn = () => {
      const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (current && current !== latest && !current.writableFinished) {
        current.once('close', whenItsTurn);
      } else if (latest.headersSent) {
        latest.once('close', () => socket.destroy());
      } else {
        refuse(cutShort, reading);
      }
    };
    whenItsTurn();
  };

/** What a route reading a request body learns when the body stops arriving. */
export function bodyCutShort(status: number): Error {
  const reason = status === 408 ? 'did not arrive in time' : 'was cut short or is not valid HTTP';
  return Object.assign(new Error(`The request body ${reason}.`), {
    code: 'ERR_BODY_CUT_SHORT',
    statusCode: status,
  });
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
 * - A client that half-closes its side of the connection once its request is sent (a TCP FIN)
 *   still wants the answer (RFC 9112 §9.6), but Node aborts such a request by default: one
 *   answered at once came through, a list read from the database was never answered nor
 *   logged. `httpAllowHalfOpen` (read by Node's HTTP server since its first versions, though
 *   not in its documentation; `test/http/protocol.test.ts` pins it) has the request answered,
 *   then the connection closed.
 */
export function routeEveryRequest(app: FastifyInstance): void {
  (app.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  trackLatestResponses(app.server);
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(app.server.requestTimeout || CONNECT_TIMEOUT_MS, () => socket.destroy());
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on('finish', () => socket.end());
    app.routing(request, response);
  });
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    noteLatestResponse(request.socket, response);
    app.routing(request, response);
  });
}
