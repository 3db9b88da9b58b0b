import { randomUUID } from 'node:crypto';
import compress from '@fastify/compress';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { ServerConfig } from './config.ts';
import type { DatabaseHandle } from './db/connect.ts';
import { listenedDataVersions, readEveryTime, sqliteDataVersions } from './db/data-versions.ts';
import { DerivedCache } from './db/derived-cache.ts';
import { EmployeeDirectories } from './db/embedded-employees.ts';
import type { LoadedSamples } from './db/list-samples-load.ts';
import type { AnchorRun, SortBounds } from './db/list-source.ts';
import { readersDb, SqliteReaders } from './db/sqlite-readers.ts';
import { forCompression } from './http/accept-encoding.ts';
import { Admission } from './http/admission.ts';
import { api } from './http/api.ts';
import { type AuthContext, createAuthenticator } from './http/auth.ts';
import {
  answerClientErrors,
  answerRouterErrorUnless,
  ROUTER_OPTIONS,
  readOnlyRefusal,
  rememberRequestId,
  routeEveryRequest,
} from './http/client-errors.ts';
import { API_PREFIX, type ApiDeps, hostProblem } from './http/deps.ts';
import { registerErrorHandlers } from './http/error-handler.ts';
import { inTurnServerFactory } from './http/in-turn.ts';
import { keepAliveAnnouncer } from './http/keep-alive.ts';
import { registerDocsPageFixes } from './http/openapi/docs-page.ts';
import { registerErrorsPage } from './http/openapi/errors-page.ts';
import { registerReferencePage } from './http/openapi/reference-page.ts';
import { registerETags } from './http/plugins/etag.ts';
import { registerHeadLikeGet } from './http/plugins/head-like-get.ts';
import { knownPaths, refuseOtherMethods, routeEveryMethod } from './http/plugins/read-only.ts';
import { registerQueryKeywords } from './http/query-keywords.ts';
import { takesRequestId } from './http/request-id.ts';
import { logEachRequest } from './http/request-log.ts';
import { ResponseCache } from './http/response-cache.ts';
import { healthRoutes } from './http/routes/health.ts';
import { buildSerializer } from './http/serializers.ts';
import { pooledValidators } from './http/validators.ts';
import { warmLists } from './http/warm-lists.ts';
import { decorateWarmUp } from './http/warm-up.ts';
import type { ServiceMetrics } from './metrics/service-metrics.ts';
import type { RateLimitStore } from './ratelimit/limiter.ts';
import type { ReceiptStore } from './receipts/store.ts';

export interface AppOptions {
  config: ServerConfig;
  /** Where API reads go: the primary, or a replica when DATABASE_READ_URL is set. */
  database: DatabaseHandle;
  /** The primary, for key lookups and the few writes (last_used_at); defaults to `database`. */
  primaryDatabase?: DatabaseHandle;
  limiter: RateLimitStore;
  receipts: ReceiptStore;
  logger?: FastifyBaseLogger;
  /** Recorded when METRICS_PORT is set; the metrics listener itself is server.ts's. */
  metrics?: ServiceMetrics;
}

/** Anchor lists of long lists kept at once (each up to total ÷ ANCHOR_INTERVAL anchors). */
const ANCHOR_CACHE_ENTRIES = 200;
/** Companies' sample sets kept at once (a large company's: up to 10 columns × 1,000 samples). */
const SAMPLE_CACHE_ENTRIES = 64;

/**
 * zlib's level for gzip and deflate answers: levels 1–3 match strings greedily, 4 and up lazily;
 * on list pages 3 costs a third to a half of 6's CPU for 8–15 % more bytes (docs/performance.md,
 * item 77). Exported for the test that pins it.
 */
export const GZIP_LEVEL = 3;

/** Builds the whole service as a Fastify instance; `server.ts` only listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  const primary = options.primaryDatabase ?? database;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Fastify's own per-request lines are replaced by the one line the onResponse hook writes.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy,
    // While shutting down, a request that still arrives on an open keep-alive connection is
    // served (with Connection: close) rather than answered with Fastify's plain-JSON 503.
    return503OnClosing: false,
    // Slow clients: headers and the whole request must arrive in time (else 408), and an idle
    // keep-alive connection is closed. Node checks every connection once a second for this.
    // An HTTP/1.1 request without Host is refused by `hostProblem` (problem+json), not by
    // Node's bare 400 without a body or request id.
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: 1000,
      requireHostHeader: false,
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A connection silent both ways for this long is closed, even mid-response (a client that
    // stops reading); never shorter than a query may run.
    connectionTimeout: Math.max(config.keepAliveTimeoutMs, config.statementTimeoutMs + 5000),
    // A connection's pipelined requests one at a time (src/http/in-turn.ts).
    serverFactory: inTurnServerFactory,
    clientErrorHandler: answerClientErrors(
      readOnlyRefusal,
      options.metrics?.countRefusedRequest.bind(options.metrics, 'api'),
    ),
    ...ROUTER_OPTIONS,
    // A request-target in absolute form with an empty host (`GET http:///…`) reaches the router
    // with no path it can take: it is refused for its host (400), as `hostProblem` refuses it
    // on a route, not answered as an unknown path.
    frameworkErrors: answerRouterErrorUnless(hostProblem),
    // A client's own request id is echoed when it is sane; otherwise we make one. One that
    // holds a secret (a client that put its key, or the admin token, in the wrong header) is
    // never taken: it would be written to every log line of the request.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return rememberRequestId(
        request,
        takesRequestId(given, config.admin?.tokens ?? [], request.headers.authorization)
          ? given
          : randomUUID(),
      );
    },
    schemaController: {
      compilersFactory: { buildSerializer: buildSerializer(), buildValidator: pooledValidators },
    },
    ajv: {
      // Query strings are short (URL length is capped), so reporting every bad parameter at
      // once is cheap.
      customOptions: { allErrors: true },
      plugins: [registerQueryKeywords],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  decorateWarmUp(app);
  // Before any route, the not-found handler's included. None carries a body the service reads
  // (it is read-only), so none is parsed: a QUERY without a Content-Type or a POST of broken
  // JSON to an unknown path is still that path's 404.
  routeEveryMethod(app, { bodies: 'none' });
  routeEveryRequest(app);
  // Nor is a client that asks first (`Expect: 100-continue`) told to send its body: it gets its
  // answer at once, and Node closes the connection after it (the body may never come).
  app.server.on('checkContinue', (request, response) =>
    app.server.emit('request', request, response),
  );

  const announceKeepAlive = keepAliveAnnouncer(config.keepAliveTimeoutMs);
  // Shutting down: a response to a request that was already in flight closes its connection
  // (Fastify marks the ones that arrive later), so no kept-alive connection holds the exit.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
    else announceKeepAlive(reply.raw);
    // An error answers this request at this moment: no cache keeps it (a 404 is cacheable by
    // default, RFC 9110 §15.1), off the API's routes too, which say no-store of everything.
    if (reply.statusCode >= 400 && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    const problem = hostProblem(request);
    if (problem) throw problem;
    // Compression (below) reads every `*` and `x-gzip` in Accept-Encoding as gzip,
    // `gzip;q=0, *` and `gzip;q=0, x-gzip` included.
    const codings = request.headers['accept-encoding'];
    if (codings !== undefined) request.headers['accept-encoding'] = forCompression(codings);
  });
  // One line a request; the company and the key id (never the key) say who sent it, once the
  // key is known (left out while undefined: no key, or one that was refused).
  const { metrics } = options;
  logEachRequest(
    app,
    (request) => {
      const auth = request.auth as AuthContext | undefined;
      return { companyId: auth?.company.id, keyId: auth?.keyId };
    },
    metrics?.observeRequest.bind(metrics),
  );
  if (metrics) app.addHook('onError', async (_request, _reply, error) => metrics.countError(error));

  registerErrorHandlers(app);
  registerETags(app);
  // Bodies up to 128 KB (every list page) are compressed at once on the event loop, not in
  // libuv's threads through a stream pipeline as the plugin does above 8 KB on two cores: the
  // pipeline's own work cost the event loop more than the compression it handed off
  // (docs/performance.md, item 45). Larger ones (change-feed pages of 1,000 entries) still go to
  // the threads. gzip and deflate at GZIP_LEVEL, not zlib's default 6.
  // Declared before compression, whose onSend hooks it must precede on the reference page.
  registerDocsPageFixes(app);
  await app.register(compress, {
    global: true,
    threshold: 1024,
    syncThreshold: 128 * 1024,
    zlibOptions: { level: GZIP_LEVEL },
  });
  registerHeadLikeGet(app);
  // The paths outside the API (/docs, /healthz, …): other methods on them are 405 as well.
  const pathsOutsideApi = knownPaths(app);
  await registerReferencePage(app, config.publicBaseUrl);

  // Where every problem's `type` points: each error code explained under its own anchor.
  registerErrorsPage(app);

  await app.register(healthRoutes, {
    databases:
      primary === database
        ? [['database', 'The database', database]]
        : [
            ['primary', 'The primary database', primary],
            ['replica', 'The read replica', database],
          ],
    limiter: options.limiter,
  });

  refuseOtherMethods(app, pathsOutsideApi, { prefix: '' });

  // SQLite reads run on threads of their own, so a slow one holds no other request.
  const readers =
    database.dialect === 'sqlite' && database.sqlite.name !== ':memory:' && config.sqliteReaders > 0
      ? new SqliteReaders({
          path: database.sqlite.name,
          threads: config.sqliteReaders,
          nice: config.sqliteReaderNice,
          busyTimeoutMs: config.statementTimeoutMs,
        })
      : null;
  const readDb = readers ? readersDb(readers) : database.db;
  if (readers) {
    app.addHook('onClose', () => readers.stop());
    await readers.ready();
  }
  // Kept on PostgreSQL, where the primary says when they change (a replica hears nothing of it);
  // read on the event loop from a SQLite file whose other reads go to the reader threads.
  const dataVersions =
    database.dialect === 'postgres' && database === primary
      ? listenedDataVersions(database.db, database.pool, app.log)
      : database.dialect === 'sqlite' && readers
        ? sqliteDataVersions(database.sqlite)
        : readEveryTime(readDb);
  app.addHook('onClose', () => dataVersions.close());
  const deps: ApiDeps = {
    config,
    db: readDb,
    primaryDb: primary === database ? null : primary.db,
    dataVersions,
    listCaches: {
      derived: new DerivedCache<number>(),
      anchors: new DerivedCache<AnchorRun>(ANCHOR_CACHE_ENTRIES),
      samples: new DerivedCache<LoadedSamples>(SAMPLE_CACHE_ENTRIES),
      bounds: new DerivedCache<SortBounds | null>(),
      employees: new EmployeeDirectories(),
    },
    responses:
      config.responseCacheMb > 0 ? new ResponseCache(config.responseCacheMb * 1024 * 1024) : null,
    receipts: options.receipts,
    authenticator: createAuthenticator({
      primaryDb: primary.db,
      writePrimary: primary.write,
      limiter: options.limiter,
      onWriteError: (error) => {
        metrics?.countError(error);
        app.log.warn({ err: error }, 'could not record key use');
      },
    }),
    admission: new Admission(
      config.maxConcurrentRequests,
      config.maxQueuedRequests,
      config.maxQueueWaitMs,
    ),
    readers,
  };
  // Hooks run last-registered first: the employee copies stop reading before the database does.
  app.addHook('onClose', () => deps.listCaches.employees.close());
  app.warmLists = () => warmLists(deps);
  if (metrics) {
    metrics.trackKeyCache(deps.authenticator.keyCache);
    metrics.trackAdmission(deps.admission);
    if (deps.responses) metrics.trackResponseCache(deps.responses);
  }
  await app.register(api, { prefix: API_PREFIX, deps });
  return app;
}
