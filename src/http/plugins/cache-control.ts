import fp from 'fastify-plugin';

/** Company data is never cached on the way: an answer that says nothing else is `no-store`. */
export const cacheControl = fp(
  async (app) => {
    app.addHook('onSend', async (_request, reply) => {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    });
  },
  { name: 'cache-control' },
);
