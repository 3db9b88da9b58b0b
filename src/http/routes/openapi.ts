import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The API description, for anyone: it describes the API, not itself. */
export const openapiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () =>
    app.swagger(),
  );
};
