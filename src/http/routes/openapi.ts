import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/**
 * The API description, for anyone: it describes the API, not itself. Not company data, so it
 * may be kept (`no-cache`, where the API's answers say `no-store`): a browser or tool asks again
 * with its ETag, and a 304 answers until an upgrade changes the document.
 */
export const openapiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async (_, reply) =>
    reply.header('cache-control', 'no-cache').send(app.swagger()),
  );
};
