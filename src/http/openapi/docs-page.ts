import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The reference page's own paths (the plugin's `/`, and its redirect to it). */
const PAGE_ROUTES = new Set(['/docs', '/docs/']);
const STATIC_INDEX_ROUTE = '/docs/static/index.html';
/** The page's own files (@fastify/static under the page's prefix). */
const STATIC_PREFIX = '/docs/static/';

const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/**
 * Mends what the reference page (@fastify/swagger-ui) does with a URL a link may carry, and on
 * a phone:
 * - a query string (`/docs?utm_source=mail`): the page finds its document at its own URL plus
 *   `./json`, query and all, so it loaded the page itself and showed no operation; and the
 *   plugin's `/docs/static/index.html?x` redirected to itself. Both are redirected to the page
 *   without the query, relatively (so behind a path prefix too; see `redirectToPage`);
 * - no viewport: a phone drew it at a desktop's width, shrunk to a third;
 * - the static files' preconditions compared weakly (see `compareStrongly`).
 */
export function registerDocsPageFixes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(STATIC_PREFIX)) {
      route.onRequest = first(compareStrongly, route.onRequest);
    }
    // On the page's routes alone, and first among their onSend hooks: compression's, which
    // @fastify/compress adds to each route as it is declared, makes the page a stream.
    if (!PAGE_ROUTES.has(route.url)) return;
    route.onSend = first(withViewport, route.onSend);
  });
}

/** A route's hooks of one kind (none, one or several) with `hook` before the others. */
const first = <Hook>(hook: Hook, others: Hook | Hook[] | undefined): Hook[] => [
  hook,
  ...(others === undefined ? [] : ([others].flat() as Hook[])),
];

async function withViewport(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (typeof payload !== 'string' || reply.statusCode !== 200) return payload;
  return payload.replace('<meta charset="UTF-8">', `<meta charset="UTF-8">\n${VIEWPORT}`);
}

/**
 * The static files' server (@fastify/send) tags a file weakly (`W/"size-mtime"`) but compares
 * `If-Match` and `If-Range` weakly too, where RFC 9110 (§13.1.1, §13.1.5) says strongly, which a
 * weak tag never passes: an `If-Match` of the file's own tag answered 200, not 412, and an
 * `If-Range` of it 206, not the whole file. So every tag of those two fails here, as the RFC's
 * comparison would have it: `If-Match` with any tag (not `*`) becomes one no file has, which the
 * server answers with its 412 once it has found the file (a missing one stays a 404), and an
 * `If-Range` with a tag drops the range (the whole file, 200). A date is left to the server.
 */
async function compareStrongly(request: FastifyRequest) {
  const headers = request.raw.headers;
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined && ifMatch.trim() !== '*') headers['if-match'] = '""';
  const ifRange = headers['if-range'];
  if (ifRange?.includes('"')) delete headers.range;
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
