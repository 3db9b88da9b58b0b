import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Options as AjvOptions } from 'ajv';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { AdminToken } from '../admin-tokens.ts';
import type { ServerConfig } from '../config.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import {
  answerClientErrors,
  answerRouterError,
  ROUTER_OPTIONS,
  rememberRequestId,
  routeEveryRequest,
} from '../http/client-errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { noSuchResource, unusableHost } from '../http/errors.ts';
import { inTurnServerFactory } from '../http/in-turn.ts';
import { keepAliveAnnouncer } from '../http/keep-alive.ts';
import { registerErrorsPage } from '../http/openapi/errors-page.ts';
import {
  knownPaths,
  refusalWithMethodsOf,
  refuseOtherMethods,
  routeEveryMethod,
} from '../http/plugins/read-only.ts';
import { registerQueryKeywords } from '../http/query-keywords.ts';
import { logEachRequest } from '../http/request-log.ts';
import { buildSerializer } from '../http/serializers.ts';
import { pooledValidators } from '../http/validators.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { ADMIN_MODELS } from '../schemas/admin.ts';
import { AdminAuth } from './auth.ts';
import { enforceBodyTimeout } from './body-timeout.ts';
import {
  adminMethodNotAllowed,
  answerAdminError,
  invalidBody,
  unreadableJsonBody,
} from './errors.ts';
import { ADMIN_DOCUMENT_PATH, adminSwaggerOptions } from './openapi.ts';
import { panelRoutes } from './panel/panel.routes.ts';
import { decodeRequestBodies } from './request-encoding.ts';
import { companyRoutes } from './routes/companies.routes.ts';
import { importRoutes } from './routes/import.routes.ts';
import { keyRoutes } from './routes/keys.routes.ts';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export interface AdminAppOptions {
  config: ServerConfig;
  /** The primary: the admin API writes. */
  database: DatabaseHandle;
  receipts: ReceiptStore;
  tokens: readonly AdminToken[];
  logger?: FastifyBaseLogger;
  /** With METRICS_PORT: every admin request is counted, and the database errors it meets. */
  metrics?: ServiceMetrics;
}

/**
 * Fastify's validators, but a body's values are taken as they are sent: Ajv's coercion (which
 * path ids need, as text) made `"per_minute": true` a limit of 1 a minute, `"name": 123` the
 * name "123" and `"scopes": "leaves.read"` a list; each is a 422 naming the field instead.
 */
function exactBodies(): ValidatorFactory {
  return (externalSchemas, options) => {
    const coercing = pooledValidators(externalSchemas, options);
    const exact = pooledValidators(externalSchemas, {
      ...options,
      mode: undefined,
      customOptions: { ...(options?.customOptions as AjvOptions), coerceTypes: false },
    });
    return (route) => (route.httpPart === 'body' ? exact : coercing)(route);
  };
}

/**
 * The admin listener (`ADMIN_PORT`) as a Fastify instance of its own: the admin API under
 * /admin, its OpenAPI document and the reference panel. None of it is routed on the public
 * listener, which is another instance.
 */
export async function buildAdminApp(options: AdminAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  // Each path's methods, as its routes are made (`knownPaths`, below).
  const paths = new Map<string, Set<string>>();
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger.child({ listener: 'admin' }) }
      : { logger: false }),
    // While shutting down, a request that still arrives on an open connection is served (with
    // Connection: close), as on the public listener, rather than answered with Fastify's
    // plain-JSON 503.
    return503OnClosing: false,
    logController: new LogController({ disableRequestLogging: true }),
    // The public side's TRUST_PROXY is not this listener's: the platform reaches it without
    // the public proxy, and a client-chosen X-Forwarded-For would dodge the failed-token limit.
    // With ADMIN_TRUST_PROXY, one hop: the address the proxy in front reports, the last entry
    // of X-Forwarded-For. Trusting every hop would take the first, which the client writes
    // itself behind a proxy that appends to it (nginx's $proxy_add_x_forwarded_for).
    // (Fastify refuses a hop count; a function that trusts the connection's peer alone says it.)
    trustProxy: config.admin?.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    // An HTTP/1.1 request without Host gets a problem+json 400 (below), not Node's bare one.
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: 1000,
      requireHostHeader: false,
    },
    // The body's timeout is enforceBodyTimeout's; the headers' stays Node's.
    requestTimeout: 0,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A connection's pipelined requests one at a time, as on the API (src/http/in-turn.ts).
    serverFactory: inTurnServerFactory,
    // Bytes that are not HTTP and router errors get problem+json here too, as on the API.
    clientErrorHandler: answerClientErrors(
      refusalWithMethodsOf(paths, adminMethodNotAllowed),
      options.metrics?.countRefusedRequest.bind(options.metrics, 'admin'),
    ),
    ...ROUTER_OPTIONS,
    frameworkErrors: answerRouterError,
    genReqId: (request) => rememberRequestId(request, randomUUID()),
    schemaController: {
      compilersFactory: { buildSerializer: buildSerializer(), buildValidator: exactBodies() },
    },
    // A field the body does not declare is refused (422), not silently dropped. The schemas'
    // own keywords (`says`: a field's message in a 422) are the API's.
    ajv: {
      customOptions: { allErrors: true, removeAdditional: false },
      plugins: [registerQueryKeywords],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A client that asks first (`Expect: 100-continue`) is told to send its body only once its
  // token is accepted (below): a request without one is answered 401 before any body comes, and
  // Node closes the connection after that answer (the body may never come).
  const askedToContinue = new WeakSet<ServerResponse>();
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    askedToContinue.add(response);
    app.server.emit('request', request, response);
  });
  enforceBodyTimeout(app, config.requestTimeoutMs);
  await decodeRequestBodies(app);
  // A method a path does not take is 405 with those it takes, as on the public listener: every
  // method can be routed (POST keeps its body), and each path's others are refused once every
  // route is made.
  routeEveryMethod(app, { bodies: 'known' });
  knownPaths(app, paths);
  routeEveryRequest(app);
  drainUnreadBodies(app);
  const announceKeepAlive = keepAliveAnnouncer(config.keepAliveTimeoutMs);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'no-store');
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 predates it.
    if (request.headers.host === undefined && request.raw.httpVersion !== '1.0') {
      throw unusableHost('missing');
    }
  });
  // An answer that closes its connection (a body that stopped decoding) announces no keep-alive.
  app.addHook('onSend', async (_request, reply) => {
    if (reply.getHeader('connection') !== 'close') announceKeepAlive(reply.raw);
  });
  // One line a request, as on the public listener, naming the admin who sent it.
  const { metrics } = options;
  logEachRequest(
    app,
    (request) => ({ actor: request.adminActor || undefined }),
    metrics?.observeAdminRequest.bind(metrics),
  );
  if (metrics) app.addHook('onError', async (_request, _reply, error) => metrics.countError(error));
  // A JSON body is UTF-8 (RFC 8259). Fastify's own parser reads other bytes with U+FFFD in
  // their place, so a Latin-1 `Müller` became a key named `M�ller`; it is refused instead, and
  // a body that is not JSON says so rather than that the request is not HTTP.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Fastify reads text/plain too, as a string: a JSON body sent as text/plain was answered 422
  // `must be object`, where any other type is 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    // No bytes is no body, whatever the type says (clients that always send one).
    if (bytes.length === 0) return done(null, undefined);
    if (!isUtf8(bytes)) return done(unreadableJsonBody('not UTF-8'), undefined);
    const text = bytes.toString('utf8');
    parseJson(request, text, (error, value) => {
      if (!error) return done(null, value);
      // JSON, but with a key that would reach an object's prototype, which the parser refuses
      // without saying why: refused as an undeclared field is, not as text that is not JSON.
      // (JSON.parse makes such a key an own property; its value is dropped at once.)
      if (isJson(text)) {
        return done(
          invalidBody([
            { parameter: '(body)', message: 'has a __proto__ or constructor.prototype field' },
          ]),
          undefined,
        );
      }
      return done(unreadableJsonBody('not valid JSON'), undefined);
    });
  });
  // An operation that reads a body, sent none: validated as `{}`, so the 422 names the fields it
  // lacks rather than saying the body must be an object.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
  app.setErrorHandler(answerAdminError);
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, noSuchResource()));
  for (const model of ADMIN_MODELS) app.addSchema(model);
  await app.register(swagger, adminSwaggerOptions());
  app.get(ADMIN_DOCUMENT_PATH, { schema: { hide: true } }, async () => app.swagger());
  panelRoutes(app);
  // Where its problems' `type` points (`/docs/errors#import_failed`), as on the public listener;
  // leading back to the panel, as this listener serves no reference page.
  registerErrorsPage(app, { href: '../admin', text: 'Back to the admin panel' });

  // Sent with no token or a wrong one, every operation is refused before its body is read.
  const auth = new AdminAuth(options.tokens);
  app.decorateRequest('adminActor', '');
  const importDir = mkdtempSync(join(tmpdir(), 'cdapi-admin-import-'));
  app.addHook('onClose', async () => rmSync(importDir, { recursive: true, force: true }));
  const deps = { database: options.database, receipts: options.receipts };
  await app.register(async (operations) => {
    operations.addHook('onRequest', async (request, reply) => {
      request.adminActor = auth.check(request);
      if (askedToContinue.has(reply.raw)) reply.raw.writeContinue();
    });
    await operations.register(companyRoutes, { deps });
    await operations.register(keyRoutes, { deps });
    await operations.register(importRoutes, {
      deps: { ...deps, importDir, changesRetentionDays: config.changesRetentionDays },
    });
  });
  refuseOtherMethods(app, paths, { prefix: '', refusal: adminMethodNotAllowed });
  return app;
}

/**
 * A request answered before its body has all come (an import's bad line early in a large body)
 * has the rest of its body read and dropped, as the client sends it anyway: the connection then
 * serves the next request. Left unread, it held the connection, and the next request on it
 * waited for HTTP_REQUEST_TIMEOUT_MS and got a 408. A body that can no longer be read (its
 * decoding failed) has been destroyed, and its connection closes after the answer. A body that
 * never ends is still cut off by HTTP_REQUEST_TIMEOUT_MS.
 */
function drainUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request) => {
    const { raw, body } = request;
    if (raw.complete || raw.destroyed) return;
    // A decoded body (Content-Encoding) is a stream the raw one flows into.
    if (body instanceof Readable) body.resume();
    raw.resume();
  });
}
