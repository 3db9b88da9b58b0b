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
 * A listener's connections for its graceful close. `server.close()` closes the connections idle
 * at that moment, and stops Node's check of the others' timeouts: a connection whose request
 * line and headers never arrive whole (a port scanner, a load balancer's probe, a slow client),
 * or whose body stopped arriving, would hold the exit until the client left. While closing,
 * the timeouts are kept here instead, counted from the close (a connection older than that had
 * the running listener's): such a request gets what Node's own check gives it, its clientError
 * (a 408, or a route reading its body told that it did not arrive in time). A connection that
 * turns idle after its answer is closed at once (it would otherwise hold the exit for the
 * keep-alive timeout). Requests that arrived whole finish as they would.
 */
export function closeGracefully(server: Server, timeouts: Timeouts) {
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return {
    /** Runs until `closed` settles: the close of the app that owns `server`. */
    async during(closed: Promise<unknown>): Promise<void> {
      const since = performance.now();
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
