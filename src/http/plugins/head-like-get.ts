import type { FastifyInstance, onSendHookHandler } from 'fastify';

/** The name of the onSend hook Fastify ends the HEAD route it makes for each GET route with. */
const FASTIFY_HEAD_HOOK = 'headRouteOnSendHandler';

/**
 * A HEAD answer carries the headers the GET would (RFC 9110 §9.3.2), compressed too: the same
 * Content-Encoding and Content-Length for the same Accept-Encoding. Fastify's HEAD route of a GET
 * ends its onSend hooks with its own, which drops the body and states its length; a plugin's
 * onSend hooks added to the route afterwards (@fastify/compress's) then saw no body, and a HEAD
 * told the uncompressed length without Content-Encoding. Here the hooks added after Fastify's
 * run before it instead, except on a 304, which has no body to encode (its HEAD's is an empty
 * stream, see `registerETags`). Register after the plugins whose hooks it moves.
 */
export function registerHeadLikeGet(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD' || !Array.isArray(route.onSend)) return;
    const hooks = route.onSend as onSendHookHandler[];
    const at = hooks.findIndex((hook) => hook.name === FASTIFY_HEAD_HOOK);
    if (at < 0 || at === hooks.length - 1) return;
    const [headHook] = hooks.splice(at, 1) as [onSendHookHandler];
    const added = hooks.splice(at);
    const encoded = added.map(
      (hook): onSendHookHandler =>
        function (this: FastifyInstance, request, reply, payload, done) {
          if (reply.statusCode === 304) return done(null, payload);
          // A hook that returns a promise (not @fastify/compress's) hands its payload on so.
          const result: unknown = hook.call(this, request, reply, payload, done);
          if (result instanceof Promise) result.then((next) => done(null, next), done);
        },
    );
    hooks.push(...encoded, headHook);
  });
}
