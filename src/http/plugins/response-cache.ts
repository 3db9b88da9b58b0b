import fp from 'fastify-plugin';
import { type ApiDeps, apiBaseUrl } from '../deps.ts';
import type { ResponseCache } from '../response-cache.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers the response cache may keep (see `operation`). */
    cacheable?: boolean;
  }
  interface FastifyRequest {
    /** Set when this request's 200 answer is to be kept by the response cache. */
    responseCacheKey?: string;
  }
}

/**
 * After the key, scope and rate-limit checks (a cached answer is still a counted request):
 * an answer kept for this company's current data version and this URL is sent as it was;
 * otherwise the route runs and its 200 answer goes to the cache as the JSON text, as the ETag
 * hook encoded it (kept the second time it is made, see `ResponseCache`), before compression (a
 * route hook of @fastify/compress, run after this one), and is compressed afresh for each
 * client that asks.
 */
export const responseCache = fp<{ cache: ResponseCache; config: ApiDeps['config'] }>(
  async (app, { cache, config }) => {
    app.addHook('preHandler', async (request, reply) => {
      if (!request.routeOptions.config.cacheable) return;
      const version = await request.dataVersion();
      // The base URL is in the key: receipt links in a body are absolute.
      const key = `${request.auth.company.id}:${version}:${apiBaseUrl(config, request)}:${request.url}`;
      const body = cache.get(key);
      if (body !== undefined) return reply.type('application/json; charset=utf-8').send(body);
      request.responseCacheKey = key;
    });
    app.addHook('onSend', async (request, reply, payload) => {
      const key = request.responseCacheKey;
      if (
        key &&
        reply.statusCode === 200 &&
        (typeof payload === 'string' || Buffer.isBuffer(payload))
      ) {
        cache.set(key, payload);
      }
    });
  },
  { name: 'response-cache', dependencies: ['authentication'] },
);
