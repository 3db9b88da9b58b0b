import fp from 'fastify-plugin';
import type { DataVersions } from '../../db/data-versions.ts';
import type { Authenticator } from '../auth.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes anyone may call without a key (405 answers, the API description, signed files). */
    public?: boolean;
  }
  interface FastifyRequest {
    /**
     * The key's company's data version (see `DataVersions`), asked for on the first call and
     * then reused for the rest of the request (cache keys, derived values).
     */
    dataVersion(): Promise<number>;
    /** Makes `version` the one `dataVersion` gives for the rest of the request. */
    useDataVersion(version: number): void;
  }
}

/**
 * Every route but public ones needs a valid key (see `createAuthenticator` for the checks and
 * their order); once it is known, the request can read its company's data version.
 */
export const authentication = fp<{ authenticator: Authenticator; versions: DataVersions }>(
  async (app, { authenticator, versions }) => {
    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.config.public) return;
      await authenticator.authenticate(request, reply);
      let version: Promise<number> | undefined;
      request.dataVersion = () => {
        version ??= versions.of(request.auth.company.id);
        return version;
      };
      request.useDataVersion = (read) => {
        version = Promise.resolve(read);
      };
    });
  },
  { name: 'authentication', dependencies: ['admission'] },
);
