import type { SwaggerOptions } from '@fastify/swagger';
import { ADMIN_TAGS } from './operation.ts';

export const ADMIN_PREFIX = '/admin';
export const ADMIN_DOCUMENT_PATH = `${ADMIN_PREFIX}/openapi.json`;

const DESCRIPTION = `The administration of the Company Data API, for the HR platform's panel: companies
(list, status, import, purge), their API keys (create, list, revoke) and NDJSON imports by HTTP.
It is served on a listener of its own (\`ADMIN_PORT\`), never on the public one, and every
operation needs \`Authorization: Bearer <ADMIN_TOKEN>\`. Each change is written to the log as
an audit line naming the token's label (\`ADMIN_TOKEN_LABEL\`), never a key or the token.
Errors are RFC 9457 problem details (\`application/problem+json\`) with a \`code\`.`;

/** The admin listener's own OpenAPI document: its operations only, never the public API's. */
export function adminSwaggerOptions(): SwaggerOptions {
  return {
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Company Data API: admin',
        version: '1.0.0',
        description: DESCRIPTION,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'This admin listener' }],
      tags: ADMIN_TAGS,
      components: {
        schemas: {},
        securitySchemes: {
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The `ADMIN_TOKEN` the service was started with.',
          },
        },
      },
    },
  };
}
