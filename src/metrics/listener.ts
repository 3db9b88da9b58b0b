import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { ServerConfig } from '../config.ts';
import { acceptsGzip } from '../http/accept-encoding.ts';
import {
  latestResponseOf,
  parserErrorStatus,
  trackLatestResponses,
} from '../http/client-errors.ts';
import { inTurn } from '../http/in-turn.ts';
import { keepAliveAnnouncer } from '../http/keep-alive.ts';
import type { ServiceMetrics } from './service-metrics.ts';

/**
 * Prometheus scrapes `GET /metrics` here: a listener of its own (METRICS_PORT), so metrics are
 * never reachable through the API's port or the proxy in front of it, need no key, and are
 * not rate limited.
 */
export async function listenForMetrics(
  metrics: ServiceMetrics,
  host: string,
  port: number,
  timeouts: Pick<ServerConfig, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'>,
): Promise<Server> {
  // The same bounds as the other listeners: a client that sends half a request and stops is
  // not kept for ever.
  const options = {
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1000,
    // An HTTP/1.1 request without Host gets the listener's own 400 (below), not Node's bare one.
    requireHostHeader: false,
  };
  // Half the timeout, as the other listeners announce (src/http/keep-alive.ts); Node's own
  // header would announce all of it.
  const announceKeepAlive = keepAliveAnnouncer(timeouts.keepAliveTimeoutMs);
  // A connection's pipelined requests one at a time, as on the other listeners.
  const server = createServer(
    options,
    inTurn((request, response) => {
      announceKeepAlive(response);
      // The headers every answer of the service carries; the id is the answer's own (nothing
      // here logs a request, so a client's would name nothing).
      response.setHeader('x-request-id', randomUUID());
      response.setHeader('x-content-type-options', 'nosniff');
      const text = (status: number, body: string, headers: Record<string, string> = {}) =>
        response
          .writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers })
          .end(body);
      // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 predates it.
      if (request.headers.host === undefined && request.httpVersion !== '1.0') {
        text(400, 'An HTTP/1.1 request must carry a Host header.\n');
        return;
      }
      if ((request.url ?? '').split('?')[0] !== '/metrics') {
        text(404, 'Not found: the metrics are at /metrics\n');
        return;
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        text(405, 'Only GET and HEAD\n', { allow: 'GET, HEAD' });
        return;
      }
      // Scrapers ask for gzip (Prometheus does): a few hundred KB of text is a tenth of that.
      const gzipped = acceptsGzip(request.headers['accept-encoding']);
      metrics
        .scrape()
        .then(async (text) => (gzipped ? await gzipAsync(text) : text))
        .then(
          (body) => {
            response.writeHead(200, {
              'content-type': metrics.contentType,
              'cache-control': 'no-store',
              vary: 'accept-encoding',
              ...(gzipped ? { 'content-encoding': 'gzip' } : {}),
            });
            response.end(request.method === 'HEAD' ? undefined : body);
          },
          () => text(500, 'The metrics could not be collected\n'),
        );
    }),
  );
  trackLatestResponses(server);
  // Connections whose refusal is sent or waits its turn: Node's parser reports the same error
  // again for every chunk that arrives after it.
  const refusing = new WeakSet<Socket>();
  // Bytes Node's parser refuses (not HTTP, an unknown method, headers over its limit, a request
  // that did not arrive in time) get its status with the headers every answer carries, once
  // the answers to the requests read before them on the connection have left, each whole.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    if (refusing.has(socket)) return;
    refusing.add(socket);
    const status = parserErrorStatus(error.code);
    const body = `${STATUS_CODES[status]}\n`;
    const refuse = () => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `Content-Length: ${body.length}\r\nX-Request-Id: ${randomUUID()}\r\n` +
          `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const latest = latestResponseOf(socket);
    if (latest && !latest.writableFinished && !latest.destroyed) latest.once('close', refuse);
    else refuse();
  });
  server.listen({ host, port });
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error)),
  ]);
  return server;
}

const gzipAsync = promisify(gzip);

/** Closes the listener and any scrape connection kept alive. */
export async function closeMetricsListener(server: Server): Promise<void> {
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  await closed;
}
