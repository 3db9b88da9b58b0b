import type { ServerResponse } from 'node:http';

/**
 * Sets the `Keep-Alive` header every listener's answers carry. Clients stop reusing an idle
 * connection at the keep-alive timeout announced (Node's agent a second before it). Half the one
 * enforced is announced, so a connection the client takes just in time is not closed under its
 * request even after the event loop stalled (on SQLite one slow query holds every request: the
 * soak saw 6 s stalls turn into resets with a 5 s margin). An answer after which the connection
 * closes (`Connection: close`, HTTP/1.0 without keep-alive) announces nothing.
 */
export function keepAliveAnnouncer(keepAliveTimeoutMs: number): (response: ServerResponse) => void {
  const announced = `timeout=${Math.max(1, Math.floor(keepAliveTimeoutMs / 2000))}`;
  return (response) => {
    if (response.shouldKeepAlive) response.setHeader('keep-alive', announced);
  };
}
