import type { SwaggerOptions } from '@fastify/swagger';
import { API_PREFIX } from '../routes/index.ts';

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
Every answer carries \`RateLimit-Policy\`, \`RateLimit\` and \`X-RateLimit-*\`; a 429 carries
\`Retry-After\` in seconds.

## Errors
Errors are RFC 9457 problem details (\`application/problem+json\`) with a machine-readable
\`code\`: unauthenticated (401), company_inactive, insufficient_scope, invalid_signature (403),
not_found, receipt_not_found (404), method_not_allowed (405), validation_failed (422, with
\`errors\` naming each bad parameter), rate_limited (429), internal_error (500),
service_unavailable (503).`;

export function swaggerOptions(publicBaseUrl: string | null): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Company Data API',
        version: '1.0.0',
        description: GETTING_STARTED,
      },
      servers: [{ url: publicBaseUrl ?? API_PREFIX, description: 'This service' }],
      components: {
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
