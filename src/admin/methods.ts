import { METHODS } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../http/errors.ts';

/**
 * A method a path of the admin listener does not take is 405 with the methods it does take, as
 * on the public listener (where every path takes GET and HEAD alone): `PATCH /admin/companies`
 * or `GET /admin/keys/7/revoke` is a wrong method, not a path that does not exist. Every method
 * Node's parser accepts can be routed (the ones Fastify does not know carry no body here); a
 * path's refusals are routed beside it once every route is made (`refuseOtherMethods`).
 */
export function collectMethodsByPath(app: FastifyInstance): { refuseOtherMethods(): void } {
  for (const method of METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: false });
  }
  const byPath = new Map<string, Set<string>>();
  let collecting = true;
  app.addHook('onRoute', (route) => {
    if (!collecting) return;
    const methods = byPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    byPath.set(route.url, methods);
  });
  return {
    refuseOtherMethods() {
      collecting = false;
      for (const [url, methods] of byPath) {
        const allow = [...methods].sort().join(', ');
        const refuse = async () => {
          throw new ApiError('method_not_allowed', `This path takes ${allow} only.`, {
            headers: { allow },
          });
        };
        app.route({
          method: METHODS.filter((method) => !methods.has(method)),
          url,
          schema: { hide: true },
          onRequest: refuse,
          handler: refuse,
        });
      }
    },
  };
}
