import type { FastifyInstance } from 'fastify';
import { PANEL_CSS, PANEL_HTML } from './page.ts';
import { PANEL_JS } from './script.ts';

/**
 * Nothing but this origin's own files: no inline script or style, no frame, no form that
 * posts elsewhere. The page holds no secret; the API behind it needs the token.
 */
const POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const FILES: Array<[path: string, type: string, body: string]> = [
  ['/admin', 'text/html; charset=utf-8', PANEL_HTML],
  ['/admin/panel.js', 'text/javascript; charset=utf-8', PANEL_JS],
  ['/admin/panel.css', 'text/css; charset=utf-8', PANEL_CSS],
];

/** The reference panel at /admin: the page, its script and its style sheet. */
export function panelRoutes(app: FastifyInstance): void {
  for (const [path, type, body] of FILES) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(type)
        .header('content-security-policy', POLICY)
        .header('referrer-policy', 'no-referrer')
        .header('x-frame-options', 'DENY')
        .send(body),
    );
  }
}
