import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { redirectToPage } from './docs-page.ts';
import { swaggerOptions } from './document.ts';

/**
 * The API description (`/docs/json`) and the reference page over it (`/docs`), with the
 * page's settings and its content security policy.
 */
export async function registerReferencePage(
  app: FastifyInstance,
  publicBaseUrl: string | null,
): Promise<void> {
  // The API description is generated from the same route schemas that validate and serialize.
  await app.register(swagger, swaggerOptions(publicBaseUrl));
  // The reference page, served from the installed package: no CDN, nothing leaves the host.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiHooks: { onRequest: redirectToPage },
    // The plugin always points the page at its own /docs/json (the same document as
    // openapi.json). BaseLayout drops the Swagger top bar, whose logo is an inline <style>.
    // persistAuthorization: the key pasted once with Authorize is kept in the browser's
    // localStorage across reloads, until Logout.
    uiConfig: {
      layout: 'BaseLayout',
      validatorUrl: null,
      deepLinking: true,
      persistAuthorization: true,
    },
    theme: {
      title: 'Company Data API reference',
      // An operation's responses table (its Links column) was 30 px wider than a phone's
      // 375: it scrolls in its own box, the page does not.
      css: [
        { filename: 'narrow.css', content: '.swagger-ui .responses-inner { overflow-x: auto; }\n' },
      ],
    },
    // The plugin's default policy adds upgrade-insecure-requests, which leaves the page blank
    // when it is reached over plain HTTP by any host name but localhost.
    staticCSP: {
      'default-src': ["'self'"],
      'base-uri': ["'self'"],
      // Execute sends its requests to the document's server: PUBLIC_BASE_URL's, when set, which
      // may be another origin than the one the page was opened under.
      'connect-src': ["'self'", ...(publicBaseUrl ? [new URL(publicBaseUrl).origin] : [])],
      'font-src': ["'self'", 'data:'],
      'form-action': ["'self'"],
      'frame-ancestors': ["'self'"],
      'img-src': ["'self'", 'data:', 'blob:'],
      'media-src': ["'self'", 'blob:'],
      'object-src': ["'none'"],
      'script-src': ["'self'"],
      'script-src-attr': ["'none'"],
      'style-src': ["'self'"],
    },
  });

  // The plugin's static files would answer /docs/static/ with the page's index.html, whose
  // relative links (./json) lead nowhere from there: the page is /docs/, as the plugin's own
  // /docs/static/index.html redirect says. Relative, so it holds behind a path prefix too.
  app.get('/docs/static/', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('../'),
  );
}
