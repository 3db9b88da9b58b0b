import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MODELS } from '../schemas/models.ts';
import type { ApiDeps } from './deps.ts';
import { admission } from './plugins/admission.ts';
import { authentication } from './plugins/authentication.ts';
import { cacheControl } from './plugins/cache-control.ts';
import { readWithinOneVersion } from './plugins/one-version.ts';
import { knownPaths, refuseOtherMethods } from './plugins/read-only.ts';
import { responseCache } from './plugins/response-cache.ts';
import { API_ROUTES } from './routes/index.ts';

/**
 * The API under its prefix: the shared models, the request pipeline (admission, key check,
 * cache headers, response cache, in that order), the routes (each answer read within one data
 * version), and the 405 of every other method on their paths.
 */
export const api: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (app, { deps }) => {
  // The shared response models, once: route schemas point at them with ref().
  for (const model of MODELS) app.addSchema(model);
  const paths = knownPaths(app);

  await app.register(admission, { admission: deps.admission });
  await app.register(authentication, {
    authenticator: deps.authenticator,
    versions: deps.dataVersions,
  });
  await app.register(readWithinOneVersion, { versions: deps.dataVersions });
  await app.register(cacheControl);
  if (deps.responses) {
    await app.register(responseCache, { cache: deps.responses, config: deps.config });
  }

  for (const routes of API_ROUTES) await app.register(routes, { deps });

  refuseOtherMethods(app, paths);
};
