import { METHODS } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerConfig } from '../../config.ts';
import { companyDataVersion } from '../../db/companies.queries.ts';
import type { Db } from '../../db/database.ts';
import type { ListCaches, ListSource } from '../../db/pagination.ts';
import type { SqliteReaders } from '../../db/sqlite-readers.ts';
import type { ReceiptStore } from '../../receipts/store.ts';
import { MODELS } from '../../schemas/models.ts';
import { type Admission, admissionHook } from '../admission.ts';
import type { Authenticator } from '../auth.ts';
import { ApiError } from '../errors.ts';
import type { ResponseCache } from '../response-cache.ts';
import { employeeRoutes } from './employees.ts';
import { expenseRoutes } from './expenses.ts';
import { leaveRoutes } from './leaves.ts';
import { meRoutes } from './me.ts';
import { referenceRoutes } from './reference.ts';

export const API_PREFIX = '/api/company/v1';

/** What every route module gets: the read database, the key check and settings. */
export interface ApiDeps {
  config: ServerConfig;
  db: Db;
  /** Values derived from companies' data, cached for list queries. */
  listCaches: ListCaches;
  /** Null when RESPONSE_CACHE_MB is 0. */
  responses: ResponseCache | null;
  receipts: ReceiptStore;
  authenticator: Authenticator;
  admission: Admission;
  /** SQLite's reader threads, when the reads run on them. */
  readers: SqliteReaders | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes anyone may call without a key (405 answers, the API description). */
    public?: boolean;
    /** Answers the response cache may keep (see `operation`). */
    cacheable?: boolean;
    /** False: served at once, never queued behind data reads (see `admission.ts`). */
    queued?: boolean;
  }
  interface FastifyRequest {
    /**
     * The key's company's data version, read from the database on the first call and then
     * reused for the rest of the request (cache keys, derived values).
     */
    dataVersion(): Promise<number>;
    /** Set when this request's 200 answer is to be kept by the response cache. */
    responseCacheKey?: string;
  }
}

/**
 * Every method Node's HTTP parser accepts but GET and HEAD (WebDAV's PROPFIND, TRACE, QUERY, …):
 * on a known path each is refused with 405. Fastify routes only some of them by itself; `app.ts`
 * adds the rest before any route is made.
 */
export const OTHER_METHODS: readonly string[] = METHODS.filter(
  (method) => method !== 'GET' && method !== 'HEAD',
);

/** What this request's list queries read from: the read database and the shared caches. */
export function listSource(deps: ApiDeps, request: FastifyRequest): ListSource {
  const { readers } = deps;
  return {
    db: deps.db,
    ...deps.listCaches,
    version: () => request.dataVersion(),
    ...(readers
      ? { chain: (query, chain) => readers.query(query.sql, query.parameters, chain) }
      : {}),
  };
}

/** The absolute base of this API as the client reached it (or as PUBLIC_BASE_URL says). */
export function apiBaseUrl(config: ServerConfig, request: FastifyRequest): string {
  return config.publicBaseUrl ?? `${request.protocol}://${request.host}${API_PREFIX}`;
}

export const apiRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (app, { deps }) => {
  // The shared response models, once: route schemas point at them with ref().
  for (const model of MODELS) app.addSchema(model);

  const paths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.method === 'GET') paths.add(route.url);
  });
  app.addHook('onRequest', admissionHook(deps.admission));
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.public) return;
    await deps.authenticator.authenticate(request, reply);
    let version: Promise<number> | undefined;
    request.dataVersion = () => {
      version ??= companyDataVersion(deps.db, request.auth.company.id);
      return version;
    };
  });
  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  if (deps.responses) registerResponseCache(app, deps, deps.responses);

  await app.register(meRoutes, { deps });
  await app.register(employeeRoutes, { deps });
  await app.register(leaveRoutes, { deps });
  await app.register(expenseRoutes, { deps });
  await app.register(referenceRoutes, { deps });

  // The description describes the API, not itself.
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () =>
    app.swagger(),
  );

  // The API is read-only: any other method on a known path is 405, with the methods it has.
  // Refused in onRequest, before the body is read: a body Fastify cannot parse (an unknown
  // content type, broken JSON) must not turn the 405 into a 415 or 400.
  const refuseMethod = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'GET, HEAD');
    throw new ApiError(
      'method_not_allowed',
      'This API is read-only: only GET and HEAD are allowed.',
    );
  };
  for (const url of paths) {
    app.route({
      method: [...OTHER_METHODS],
      url: url.slice(API_PREFIX.length) || '/',
      // Not operations: the document lists what the API does, and says it is read-only.
      schema: { hide: true },
      config: { public: true },
      onRequest: refuseMethod,
      handler: refuseMethod,
    });
  }
};

/**
 * After the key, scope and rate-limit checks (a cached answer is still a counted request):
 * an answer kept for this company's current data version and this URL is sent as it was;
 * otherwise the route runs and its 200 answer is kept. Answers compressed on the way out are
 * not kept, but a kept one is compressed for a client that asks.
 */
function registerResponseCache(app: FastifyInstance, deps: ApiDeps, cache: ResponseCache): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config.cacheable) return;
    const version = await request.dataVersion();
    // The base URL is in the key: receipt links in a body are absolute.
    const key = `${request.auth.company.id}:${version}:${apiBaseUrl(deps.config, request)}:${request.url}`;
    const body = cache.get(key);
    if (body !== undefined) return reply.type('application/json; charset=utf-8').send(body);
    request.responseCacheKey = key;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const key = request.responseCacheKey;
    if (key && reply.statusCode === 200 && typeof payload === 'string') cache.set(key, payload);
  });
}
