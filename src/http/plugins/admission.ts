import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Admission } from '../admission.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False: served at once, never queued behind data reads (see `admission.ts`). */
    queued?: boolean;
  }
}

/**
 * Bounds the data requests worked on at once (see `Admission`). In onRequest, ahead of the key
 * check, so a refused request costs nothing and is not counted against the key's rate limit:
 * every route but public ones and those whose config says `queued: false` (cheap answers such
 * as `/me`, which never wait behind data reads). A request gives its place away once its
 * answer is made (onSend), not once the client has read it: a client that reads slowly, or
 * not at all, would otherwise hold a place until its connection times out (sixteen such
 * connections held every place, and every other client was answered 503).
 */
export const admission = fp<{ admission: Admission }>(
  async (app, options) => {
    const leaving = new WeakMap<FastifyReply, () => void>();
    app.addHook('onRequest', async (request, reply) => {
      const { config } = request.routeOptions;
      if (config.public || config.queued === false) return;
      leaving.set(reply, await options.admission.enter(reply));
    });
    app.addHook('onSend', async (_request, reply, payload) => {
      leaving.get(reply)?.();
      return payload;
    });
  },
  { name: 'admission' },
);
