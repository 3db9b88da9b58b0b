import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Agent, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DatabaseHandle } from '../db/connect.ts';
import { warmConnections } from '../db/warm-connections.ts';
import { generateApiKey } from '../keys/api-key.ts';
import { API_PREFIX } from './deps.ts';
import { inTurnServerFactory } from './in-turn.ts';
import type { WarmedLists } from './warm-lists.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request id of the warm-up's requests while it runs (`warmUp`), else null. */
    warmUpRequestId: string | null;
    /** Reads the longest and the last called companies' lists (`warmLists`), once caches exist. */
    warmLists: (() => Promise<WarmedLists>) | null;
  }
}

/**
 * Declares `warmUpRequestId` on the API's instance (its children read the root's through it),
 * and `warmLists`, which the app sets once it has made the API's caches.
 */
export function decorateWarmUp(app: FastifyInstance): void {
  app.decorate('warmUpRequestId', null);
  app.decorate('warmLists', null);
}

/**
 * Whether a request is one of the warm-up's own, which are neither logged nor counted (the
 * admin listener has no warm-up, nor the decoration: there it is always false).
 */
export function isWarmUpRequest(request: FastifyRequest): boolean {
  const id: string | null | undefined = request.server.warmUpRequestId;
  return id != null && request.id === id;
}

/** The longest the warm-up may take; past it, the service starts without it. */
const WARM_UP_TIMEOUT_MS = 5000;

/**
 * Before it listens, the service opens the database connections its requests read through and
 * readies them (`warmConnections`: PostgreSQL's), then sends itself two requests over a
 * connection of its own, on a listener of 127.0.0.1 it closes at once: `/healthz`, and `/me`
 * with a key no one holds (well-formed, so it is looked up and refused). The first request of a
 * new process runs its whole path for the first time: Node's HTTP parser and socket writes, the
 * hooks, the router, the serializers and compression compiled by V8, the key look-up's
 * statement prepared. That made the first `/me` after a restart take 26–34 ms against 2–4 ms for
 * the next (docs/performance.md, item 94). Both carry a request id made for this start, by which
 * `logEachRequest` leaves them out of the log and the request metrics (the refused key's look-up
 * counts as the key cache's miss it was); no other request can carry it. Then it reads the
 * longest companies' lists in process (`warmLists`: their samples and employees, loaded by the
 * first page of each list after a restart, item 101; and each kind of filter once, item 103),
 * and those of the companies whose keys were used in the last day (item 107).
 * A warm-up that fails or outlasts WARM_UP_TIMEOUT_MS does not stop the start, which is only
 * slower: it is logged as a warning.
 */
export async function warmUp(app: FastifyInstance, database: DatabaseHandle): Promise<void> {
  await app.ready();
  // A host that drops connections to itself, or a database that stops answering, would
  // otherwise hold the start until TCP gives up.
  const deadline = AbortSignal.timeout(WARM_UP_TIMEOUT_MS);
  const pastDeadline = once(deadline, 'abort').then(() => Promise.reject(deadline.reason));
  pastDeadline.catch(() => {});
  const requestId = randomUUID();
  const server = inTurnServerFactory(app.routing, {});
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  app.warmUpRequestId = requestId;
  try {
    // Past the deadline it goes on alone; its connections are the pool's either way.
    const connecting = warmConnections(database);
    connecting.catch(() => {});
    await Promise.race([connecting, pastDeadline]);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening', { signal: deadline });
    const { port } = server.address() as AddressInfo;
    const send = async (path: string, headers: Record<string, string> = {}) => {
      const request = get({
        host: '127.0.0.1',
        port,
        path,
        agent,
        signal: deadline,
        headers: { 'x-request-id': requestId, 'accept-encoding': 'gzip', ...headers },
      });
      // Told by the `once` waiting when it comes; one after the answer (the deadline passing
      // mid-body) has nobody else to hear it.
      request.on('error', () => {});
      const [response] = await once(request, 'response', { signal: deadline });
      response.resume();
      await once(response, 'end', { signal: deadline });
    };
    await send('/healthz');
    await send(`${API_PREFIX}/me`, { authorization: `Bearer ${generateApiKey().key}` });
    if (app.warmLists) {
      const started = performance.now();
      const read = await Promise.race([app.warmLists(), pastDeadline]);
      const ms = Math.round(performance.now() - started);
      app.log.info({ ...read, ms }, 'read the longest and the last called lists before listening');
    }
  } catch (error) {
    app.log.warn({ err: error }, 'the warm-up before listening failed');
  } finally {
    app.warmUpRequestId = null;
    agent.destroy();
    server.closeAllConnections();
    server.close();
  }
}
