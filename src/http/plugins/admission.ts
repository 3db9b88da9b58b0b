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
 * as `/me`, which never wait behind data reads).
 */
export const admission = fp<{ admission: Admission }>(
  async (app, options) => {
    app.addHook('onRequest', async (request, reply) => {
      const { config } = request.routeOptions;
      if (config.public || config.queued === false) return;
      await options.admission.enter(reply);
    });
  },
  { name: 'admission' },
);
