import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { bodyCutShort } from '../http/client-errors.ts';

/** How often the admin listener looks at the bodies still arriving. */
const CHECK_MS = 250;

/**
 * Less than this arriving between two checks, with nothing left unread, is a body arriving at
 * its client's pace, not the service's: a route that reads a body more slowly than it could
 * arrive takes it in chunks of Node's 16 KiB buffer and the socket's 64 KiB reads.
 */
const TRICKLE_BYTES = 16 * 1024;

/** The bodies their routes read at their own pace (an import): only the client's waits count. */
const readAtTheServicesPace = new WeakSet<IncomingMessage>();

/**
 * Marks a request's body as one its route reads at its own pace, however slowly: of the time it
 * takes, only what the client keeps the service waiting counts against `HTTP_REQUEST_TIMEOUT_MS`
 * (`enforceBodyTimeout`).
 */
export function countClientWaitsOnly(raw: IncomingMessage): void {
  readAtTheServicesPace.add(raw);
}

/**
 * The admin listener's `HTTP_REQUEST_TIMEOUT_MS`, in place of Node's (which counts the whole
 * request: an import the service read more slowly than its client sent it, a large body while
 * another import ran, was cut unanswered at 30 s and logged as a client that did not send in
 * time). A body arriving is cut as Node cut it (its route told that it did not arrive in time:
 * an import rolls back) once the time counted against it passes the timeout: all of it, as
 * Node counts, unless its route reads it at its own pace (`countClientWaitsOnly`); then only the
 * checks that found nothing unread and less than TRICKLE_BYTES arrived since the last one, the
 * time the service waited for the client. A client trickling its body, or stopping, is cut as
 * before; the request line and headers keep Node's own timeout. Enforced while the listener
 * closes too (Node's check stops with its server, and a shutdown waits for the requests in
 * flight).
 */
export function enforceBodyTimeout(app: FastifyInstance, timeoutMs: number): void {
  const arriving = new Map<IncomingMessage, { countedMs: number; bytesRead: number }>();
  app.addHook('onRequest', async (request) => {
    const raw = request.raw;
    if (raw.complete) return;
    arriving.set(raw, { countedMs: 0, bytesRead: raw.socket.bytesRead });
    raw.once('close', () => arriving.delete(raw));
  });
  const check = setInterval(() => {
    for (const [raw, body] of arriving) {
      if (raw.complete) {
        arriving.delete(raw);
        continue;
      }
      const bytesRead = raw.socket?.bytesRead ?? body.bytesRead;
      const arrived = bytesRead - body.bytesRead;
      body.bytesRead = bytesRead;
      const waitedForClient =
        !readAtTheServicesPace.has(raw) || (raw.readableLength === 0 && arrived < TRICKLE_BYTES);
      if (waitedForClient) body.countedMs += CHECK_MS;
      if (body.countedMs <= timeoutMs) continue;
      arriving.delete(raw);
      raw.destroy(bodyCutShort(408));
      raw.socket?.destroy();
    }
  }, CHECK_MS);
  check.unref();
  app.addHook('onClose', async () => clearInterval(check));
}
