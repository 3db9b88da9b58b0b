import type { SwaggerOptions } from '@fastify/swagger';
import {
  DOCUMENTED_AS_KEYWORD,
  type DocumentedParameter,
  ERROR_MESSAGE_KEYWORD,
} from '../../schemas/common.ts';
import { ERRORS_PAGE_PATH, errorCodesByStatus } from '../../schemas/problems.ts';
import { API_PREFIX } from '../deps.ts';
import { HEADER_COMPONENT_KEYWORD, headerComponents } from './headers.ts';
import { TAGS } from './operation.ts';

/** Shown at the top of the reference page: what a new integrator needs first. */
const GETTING_STARTED = `Read-only access to one company's HR data: employees, leave requests and types,
expenses with receipt images, expense categories.

## Authentication
Send the company's API key on every request: \`Authorization: Bearer cdk_…\`. Call \`GET /me\`
first to check the key. Keys carry scopes: \`leaves.read\` for /leaves and /leave-types,
\`expenses.read\` for /expenses and /expense-categories; /me and /employees need any valid key.

## Pagination
Lists answer \`{data, meta}\`; \`page\` (from 1) and \`per_page\` (1–100, default 25) choose the
page; \`meta\` has \`current_page, per_page, total, last_page, from, to\`. Lists are ordered by
id unless \`sort\` says otherwise (\`sort=-start_date\`).

## Rate limits
Per key, at most \`per_minute\` requests in any 60 s and \`per_hour\` in any 3600 s (see /me).
Every answer to a request whose key was accepted carries \`RateLimit-Policy\`, \`RateLimit\`
and \`X-RateLimit-*\`; a 429 carries \`Retry-After\` in seconds.

## Errors
Errors are RFC 9457 problem details (\`application/problem+json\`) with a machine-readable
\`code\`: ${errorCodesByStatus()}. A problem's \`type\` links to its code on the
[errors page](${ERRORS_PAGE_PATH}). A validation_failed answer carries \`errors\`, naming each bad
parameter.

## Try it out
Paste the key once with **Authorize** (it is kept in this browser until you log out), then
**Try it out** and **Execute**: filters start empty, so a list answers its first page of
everything.
Each parameter's description gives an example value.`;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each response header a route declares (see `headers()` in headers.ts) becomes a `$ref` to the
 * one component that explains it. A header without its component is a programming error.
 */
function referenceHeaders(document: Json): Json {
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      const responses = isObject(operation) ? operation.responses : undefined;
      for (const [status, response] of Object.entries((responses ?? {}) as Json)) {
        if (!isObject(response) || !isObject(response.headers)) continue;
        for (const [name, header] of Object.entries(response.headers)) {
          const key =
            isObject(header) && isObject(header.schema)
              ? header.schema[HEADER_COMPONENT_KEYWORD]
              : undefined;
          if (typeof key !== 'string') {
            throw new Error(
              `${method.toUpperCase()} ${path} ${status}: header ${name} is not declared with headers()`,
            );
          }
          response.headers[name] = { $ref: `#/components/headers/${key}` };
        }
      }
    }
  }
  return document;
}

/** Every operation object of the document. */
function operationsOf(document: Json): Json[] {
  return Object.values((document.paths ?? {}) as Json).flatMap((item) =>
    Object.values(item as Json).filter(isObject),
  );
}

/**
 * A parameter the validator reads as text (a comma list, a path id) is shown as what it means
 * (see `DOCUMENTED_AS_KEYWORD`): an array sent as `name=a,b`, an integer. Its 422 message stays.
 */
function documentedParameters(document: Json): Json {
  for (const operation of operationsOf(document)) {
    if (!Array.isArray(operation.parameters)) continue;
    operation.parameters = operation.parameters.map((parameter: Json) => {
      const schema = isObject(parameter.schema) ? parameter.schema : {};
      const documented = schema[DOCUMENTED_AS_KEYWORD] as DocumentedParameter | undefined;
      if (!documented) return parameter;
      const message = schema[ERROR_MESSAGE_KEYWORD];
      return {
        ...parameter,
        schema: { ...documented.schema, ...(message ? { [ERROR_MESSAGE_KEYWORD]: message } : {}) },
        ...(documented.style ? { style: documented.style } : {}),
        ...(documented.explode === undefined ? {} : { explode: documented.explode }),
      };
    });
  }
  return document;
}

export function swaggerOptions(publicBaseUrl: string | null): SwaggerOptions {
  return {
    // Shared models keep their own names in components.schemas.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // Only the API is described: /healthz, /readyz and /docs live outside its base path.
    transform: ({ schema, url }) => ({
      schema: url.startsWith(API_PREFIX) ? schema : { ...schema, hide: true },
      url,
    }),
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) throw new Error('an OpenAPI document is expected');
      return documentedParameters(referenceHeaders(documentObject.openapiObject as Json));
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Company Data API',
        version: '1.0.0',
        description: GETTING_STARTED,
        // package.json: UNLICENSED. The API is the company's own service, not open source.
        // SPDX has no proprietary identifier; a LicenseRef- is its form for one of your own.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: publicBaseUrl ?? API_PREFIX, description: 'This service' }],
      tags: TAGS,
      components: {
        schemas: {},
        headers: headerComponents(),
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'cdk_ API key',
            description: 'The company API key, created with `cdapi keys create`.',
          },
        },
      },
      security: [{ bearer: [] }],
    },
  };
}
