import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The requests of one connection waiting for the answer before them to finish, in order. A
 * connection without an entry has no request in hand.
 */
const waiting = new WeakMap<Socket, Array<() => void>>();

/**
 * `handler` given a connection's requests one at a time, as nginx reads pipelined requests:
 * the next once the answer before it is written. Node's parser hands the handler every request
 * of a chunk it read at once, and each answer waits in memory behind the one before it: a
 * client that wrote a thousand requests in one packet and read nothing had the service make a
 * thousand answers (hundreds of MB of JSON, or a thousand open static files) and fill the
 * admission queue every other client waits in. A request whose client has closed the
 * connection before its turn came is dropped, neither handled nor logged: nobody is left to
 * read its answer.
 */
export function inTurn(handler: Handler): Handler {
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    let done = false;
    const next = () => {
      if (done) return;
      done = true;
      const queue = waiting.get(socket);
      const following = socket.destroyed ? undefined : queue?.shift();
      if (following) following();
      else waiting.delete(socket);
    };
    response.once('finish', next);
    response.once('close', next);
    handler(request, response);
  };
  return (request, response) => {
    const queue = waiting.get(request.socket);
    if (queue) queue.push(() => handle(request, response));
    else {
      waiting.set(request.socket, []);
      handle(request, response);
    }
  };
}

/** Fastify's `http` options and timeouts that a server made by `inTurnServerFactory` is given. */
interface FactoryOptions {
  http?: object;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
}

/**
 * Fastify's `serverFactory` for an HTTP/1.1 server that answers each connection's requests in
 * turn (`inTurn`), given the timeouts Fastify gives a server it makes itself.
 */
export function inTurnServerFactory(handler: Handler, options: FactoryOptions): Server {
  const server = createServer(options.http ?? {}, inTurn(handler));
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  return server;
}
