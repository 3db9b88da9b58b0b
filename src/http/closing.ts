import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The timeouts a listener keeps while it closes, as it did while it ran. */
interface Timeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** How often a closing listener's connections are looked at. */
const CHECK_EVERY_MS = 100;

/**
 * How long a closing listener keeps the connections that are idle between two requests. A
 * keep-alive client may be sending its next request at that very moment: closed at once, the
 * connection took it with it (a reset the client cannot tell from a crash; 7 of 8 busy clients
 * lost one at a SIGTERM). Kept this long, that request is served with `Connection: close`,
 * and a client that sends nothing more has its connection closed after it.
 */
const IDLE_GRACE_MS = 2000;

/**
 * A listener's connections for its graceful close. `server.close()` closes the connections idle
 * at that moment, and stops Node's check of the others' timeouts: a connection whose request
 * line and headers never arrive whole (a port scanner, a load balancer's probe, a slow client),
 * or whose body stopped arriving, would hold the exit until the client left. While closing,
 * the timeouts are kept here instead, counted from the close (a connection older than that had
 * the running listener's): such a request gets what Node's own check gives it, its clientError
 * (a 408, or a route reading its body told that it did not arrive in time). Connections idle
 * between two requests are kept IDLE_GRACE_MS (above), then closed once the answer before has
 * left the process (they would otherwise hold the exit for the keep-alive timeout);
 * `server.close()` and Fastify would close them at once, so the listener's
 * `closeIdleConnections` waits for the grace. Requests that arrived whole
 * finish as they would; an answer sent while closing says `Connection: close` (`app.ts`), and
 * its connection closes after it.
 */
export function closeGracefully(server: Server, timeouts: Timeouts) {
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const closeIdleConnections = server.closeIdleConnections.bind(server);
  let graceEnds = Number.POSITIVE_INFINITY;
  let drainEnds = Number.POSITIVE_INFINITY;
  server.closeIdleConnections = () => {
    const now = performance.now();
    if (now < graceEnds) return;
    // Node's counts a connection idle once its answer has ended, though the answer may still
    // wait in the socket for a slow client to read it: destroyed, the client got it cut. Such
    // a connection is spared while its answer drains, up to the request timeout from the close.
    const draining = now < drainEnds ? [...connections].filter(isDraining) : [];
    for (const socket of draining) socket.destroy = keep;
    try {
      closeIdleConnections();
    } finally {
      for (const socket of draining) delete (socket as Partial<Socket>).destroy;
    }
  };
  return {
    /** Runs until `closed` settles: the close of the app that owns `server`. */
    async during(closed: Promise<unknown>): Promise<void> {
      const since = performance.now();
      graceEnds = since + IDLE_GRACE_MS;
      drainEnds = since + timeouts.requestTimeoutMs;
      const check = setInterval(() => {
        server.closeIdleConnections();
        const waited = performance.now() - since;
        for (const socket of connections) {
          const current = (socket as Socket & { _httpMessage?: ServerResponse | null })
            ._httpMessage;
          const late = current
            ? !current.req.complete && waited >= timeouts.requestTimeoutMs
            : waited >= timeouts.headersTimeoutMs;
          if (late && !socket.destroyed) {
            const timeout = Object.assign(new Error('Request timeout'), {
              code: 'ERR_HTTP_REQUEST_TIMEOUT',
            });
            server.emit('clientError', timeout, socket);
          }
        }
      }, CHECK_EVERY_MS);
      try {
        await closed;
      } finally {
        clearInterval(check);
      }
    },
  };
}

/** An answer, or part of one, is written to the socket and not yet handed to the system. */
function isDraining(socket: Socket): boolean {
  return socket.writableLength > 0 && !socket.destroyed;
}

/** `destroy` of a socket spared by Node's `closeIdleConnections`. */
function keep(this: Socket): Socket {
  return this;
}
