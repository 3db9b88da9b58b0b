import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_PREFIX } from '../deps.ts';
import { methodNotAllowed } from '../errors.ts';

/**
 * Every method Node's HTTP parser accepts but GET and HEAD (WebDAV's PROPFIND, TRACE, QUERY, …):
 * on a known path each is refused with 405. Fastify routes only some of them by itself; `app.ts`
 * adds the rest before any route is made.
 */
export const OTHER_METHODS: readonly string[] = METHODS.filter(
  (method) => method !== 'GET' && method !== 'HEAD',
);

/**
 * The API is read-only: any other method on a known path is 405, with the methods it has.
 * `knownPaths` starts collecting the GET paths made after it; `refuseOtherMethods`, called once
 * the routes are made, answers the other methods on each of them. Refused in onRequest, before
 * the body is read: a body Fastify cannot parse (an unknown content type, broken JSON) must not
 * turn the 405 into a 415 or 400.
 */
export function knownPaths(app: FastifyInstance): Set<string> {
  const paths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().includes('GET')) paths.add(route.url);
  });
  return paths;
}

const refuseMethod = async (_request: FastifyRequest, _reply: FastifyReply) => {
  throw methodNotAllowed();
};

export function refuseOtherMethods(
  app: FastifyInstance,
  paths: Iterable<string>,
  prefix = API_PREFIX,
): void {
  for (const url of paths) {
    app.route({
      method: [...OTHER_METHODS],
      url: url.slice(prefix.length) || '/',
      // Not operations: the document lists what the API does, and says it is read-only.
      schema: { hide: true },
      config: { public: true },
      onRequest: refuseMethod,
      handler: refuseMethod,
    });
  }
}
