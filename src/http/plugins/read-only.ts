import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UnknownMethodRefusal } from '../client-errors.ts';
import { API_PREFIX } from '../deps.ts';
import { type ApiError, methodNotAllowed } from '../errors.ts';

/**
 * Lets every method Node's HTTP parser accepts be routed (WebDAV's PROPFIND, TRACE, QUERY, …;
 * Fastify routes only some of them by itself), so each meets a known path's 405 or an unknown
 * one's 404, never Fastify's own answers. Called before any route is made. None of the methods
 * Fastify did not know carries a body; with `bodies: 'none'` (the read-only API) neither does
 * any other but GET and HEAD, so a POST of broken JSON to an unknown path is still a 404.
 */
export function routeEveryMethod(app: FastifyInstance, { bodies }: { bodies: 'none' | 'known' }) {
  for (const method of METHODS) {
    if (method === 'GET' || method === 'HEAD') continue;
    if (bodies === 'known' && app.supportedMethods.includes(method)) continue;
    app.addHttpMethod(method, { hasBody: false, overrideExisting: true });
  }
}

/** The handlers of `refuseOtherMethods`' routes, which add no method to a path. */
const refusals = new WeakSet<object>();

/**
 * The API is read-only: any other method on a known path is 405, with the methods it has.
 * `knownPaths` starts collecting the methods of each path made after it (into `paths`);
 * `refuseOtherMethods`, called once the routes are made, answers every other method on each of
 * them (the admin listener's paths, which take POST too, the same way with its own refusal),
 * and `refusalWithMethodsOf` a method Node's parser does not know. Refused in
 * onRequest, before the body is read: a body Fastify cannot parse (an unknown content type,
 * broken JSON) must not turn the 405 into a 415 or 400.
 */
export function knownPaths(
  app: FastifyInstance,
  paths = new Map<string, Set<string>>(),
): Map<string, Set<string>> {
  app.addHook('onRoute', (route) => {
    if (refusals.has(route.handler)) return;
    const routed = [route.method].flat();
    const methods = paths.get(route.url);
    // HEAD alone (a GET route's own, or the reference page's `/docs/` redirect) makes no path
    // of its own: what that path answers to other methods is the GET route's business.
    if (!methods && routed.every((method) => method === 'HEAD')) return;
    const known = methods ?? new Set<string>();
    for (const method of routed) known.add(method);
    paths.set(route.url, known);
  });
  return paths;
}

/** An `Allow` header's value: `methods`, in order. */
const allowOf = (methods: ReadonlySet<string>) => [...methods].sort().join(', ');

export function refuseOtherMethods(
  app: FastifyInstance,
  paths: ReadonlyMap<string, ReadonlySet<string>>,
  {
    prefix = API_PREFIX,
    refusal = methodNotAllowed,
  }: {
    prefix?: string;
    /** The error for a path that takes `allow` (`GET, HEAD`): the API's names its own. */
    refusal?: (allow: string) => ApiError;
  } = {},
): void {
  for (const [url, methods] of paths) {
    const allow = allowOf(methods);
    const refuse = async (_request: FastifyRequest, _reply: FastifyReply) => {
      throw refusal(allow);
    };
    refusals.add(refuse);
    app.route({
      method: METHODS.filter((method) => !methods.has(method)),
      url: url.slice(prefix.length) || '/',
      // Not operations: the document lists what the API does, and says it is read-only.
      schema: { hide: true },
      config: { public: true },
      onRequest: refuse,
      handler: refuse,
    });
  }
}

/**
 * `refusal` of a method Node's parser does not know, with the methods its path takes, as
 * `knownPaths` collected them; null on a path none of them matches. The router names no route
 * for a request, only its parameters, so the route is the one of `paths` they spell the path
 * with (`/admin/companies/:id/keys` and `{ id: '7' }`: `/admin/companies/7/keys`).
 */
export function refusalWithMethodsOf(
  paths: ReadonlyMap<string, ReadonlySet<string>>,
  refusal: (allow: string) => ApiError,
): UnknownMethodRefusal {
  return (app, path) => {
    if (path === null) return null;
    const params = app.findRoute({ method: 'GET', url: path })?.params as
      | Record<string, string>
      | undefined;
    if (!params) return null;
    const requested = decodeURIComponent(path);
    for (const [url, methods] of paths) {
      const spelled = url.replace(/:(\w+)/g, (_, name: string) => params[name] ?? '');
      if (spelled === requested) return refusal(allowOf(methods));
    }
    return null;
  };
}
