import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The reference page's own paths (the plugin's `/`, and its redirect to it). */
const PAGE_ROUTES = new Set(['/docs', '/docs/']);
const STATIC_INDEX_ROUTE = '/docs/static/index.html';

const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/**
 * Mends what the reference page (@fastify/swagger-ui) does with a URL a link may carry, and on
 * a phone:
 * - a query string (`/docs?utm_source=mail`): the page finds its document at its own URL plus
 *   `./json`, query and all, so it loaded the page itself and showed no operation; and the
 *   plugin's `/docs/static/index.html?x` redirected to itself. Both are redirected to the page
 *   without the query, relatively (so behind a path prefix too; see `redirectToPage`);
 * - no viewport: a phone drew it at a desktop's width, shrunk to a third.
 */
export function registerDocsPageFixes(app: FastifyInstance): void {
  // On the page's routes alone, and first among their onSend hooks: compression's, which
  // @fastify/compress adds to each route as it is declared, makes the page a stream.
  app.addHook('onRoute', (route) => {
    if (!PAGE_ROUTES.has(route.url)) return;
    const others = route.onSend === undefined ? [] : [route.onSend].flat();
    route.onSend = [withViewport, ...others];
  });
}

async function withViewport(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (typeof payload !== 'string' || reply.statusCode !== 200) return payload;
  return payload.replace('<meta charset="UTF-8">', `<meta charset="UTF-8">\n${VIEWPORT}`);
}

/**
 * The plugin's `uiHooks.onRequest`: a page URL with a query goes to the page without it, and
 * `/docs/static/index.html` to `../` (the plugin's own redirect is absolute, `/docs/`, which
 * leaves a path prefix a proxy adds).
 */
export async function redirectToPage(request: FastifyRequest, reply: FastifyReply) {
  const route = request.routeOptions.url ?? '';
  if (route === STATIC_INDEX_ROUTE) return reply.redirect('../');
  if (!PAGE_ROUTES.has(route)) return;
  const url = request.raw.url ?? '';
  const query = url.indexOf('?');
  if (query === -1) return;
  const path = url.slice(0, query);
  // `/docs?x` → `docs`; `/docs/?x` → `./`.
  return reply.redirect(path.slice(path.lastIndexOf('/') + 1) || './');
}
