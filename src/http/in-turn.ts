import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The requests of one connection waiting for the answer before them to finish, in order. A
 * connection without an entry has no request in hand.
 */
const waiting = new WeakMap<Socket, Array<() => void>>();
/** The connections this module stopped reading (Node pauses and resumes others of its own). */
const paused = new WeakSet<Socket>();

/**
 * A connection with more requests than this waiting is closed: no client pipelines that deep,
 * and each waiting request holds memory (two KB; a hundred thousand tiny ones in one write took
 * 200 MB, and seconds of Node's work when the connection closed).
 */
export const MAX_WAITING_REQUESTS = 1000;

/**
 * `handler` given a connection's requests one at a time, as nginx reads pipelined requests:
 * the next once the answer before it is written. Node's parser hands the handler every request
 * of a chunk it read at once, and each answer waits in memory behind the one before it: a
 * client that wrote a thousand requests in one packet and read nothing had the service make a
 * thousand answers (hundreds of MB of JSON, or a thousand open static files) and fill the
 * admission queue every other client waits in. While requests wait, the connection is not read
 * (Node would read on: the answers that would make it stop are not made yet), so no more than
 * one read's requests wait, and past MAX_WAITING_REQUESTS the connection is closed. A request
 * whose connection is closing (its client closed it, or the answer before it said
 * `Connection: close`) before its turn came is dropped, neither handled nor logged: nobody is
 * left to read its answer.
 */
export function inTurn(handler: Handler): Handler {
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    let done = false;
    const next = () => {
      if (done) return;
      done = true;
      const queue = waiting.get(socket);
      // Node has ended a connection whose answer said `Connection: close` by now.
      const goesOn = !socket.destroyed && !socket.writableEnded;
      const following = goesOn ? queue?.shift() : undefined;
      if (following) following();
      else {
        waiting.delete(socket);
        if (paused.delete(socket) && goesOn) socket.resume();
      }
    };
    response.once('finish', next);
    response.once('close', next);
    handler(request, response);
  };
  return (request, response) => {
    const { socket } = request;
    const queue = waiting.get(socket);
    if (!queue) {
      waiting.set(socket, []);
      handle(request, response);
    } else if (queue.length >= MAX_WAITING_REQUESTS) {
      socket.destroy();
    } else {
      paused.add(socket);
      socket.pause();
      queue.push(() => handle(request, response));
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
