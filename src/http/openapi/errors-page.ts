import type { FastifyInstance } from 'fastify';
import { ERRORS, ERRORS_PAGE_PATH, type ErrorCode } from '../../schemas/problems.ts';

/**
 * The page a problem's `type` points at (`/docs/errors#not_found`): every code of the error
 * registry under an anchor of its own name, rendered once at start-up. Plain HTML with its
 * style inline: no script, nothing fetched, so it works offline like the reference page.
 */

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The registry's prose, with its `code spans` as <code>. */
const proseHtml = (text: string) =>
  escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => `<code>${code}</code>`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
code{font:0.9em ui-monospace,monospace;background:#f2f2f2;padding:0 .2em;border-radius:3px}
section{border-top:1px solid #ddd;padding:.5rem 0}section:target{background:#fff8d6}
h2{font-size:1.1rem;margin:.5rem 0}.status{color:#555;font-weight:normal}`;

function entryHtml(code: ErrorCode): string {
  const { status, title, when } = ERRORS[code];
  return `<section id="${code}">
<h2><code>${code}</code> <span class="status">${status} ${escapeHtml(title)}</span></h2>
<p>Answered when ${proseHtml(when)}.</p>
</section>`;
}

/** Where the page leads back to: the listener's own page, relative to `/docs/errors`. */
export interface BackLink {
  href: string;
  text: string;
}

const TO_REFERENCE: BackLink = { href: './', text: 'Back to the API reference' };

export function renderErrorsPage(back: BackLink = TO_REFERENCE): string {
  const codes = Object.keys(ERRORS) as ErrorCode[];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Errors · Company Data API</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Errors of the Company Data API</h1>
<p>Every error is an RFC 9457 problem detail, sent as <code>application/problem+json</code>:
<code>{"type", "title", "status", "detail", "code", "errors"?}</code>. Branch on
<code>code</code>; <code>type</code> links to its entry below, <code>detail</code> says what went
wrong in this request, and a <code>validation_failed</code> answer's <code>errors</code> names
each bad parameter. A 429 or 503 may succeed when retried after <code>Retry-After</code> seconds;
any other 4xx needs a different request.</p>
<p><a href="${escapeHtml(back.href)}">${escapeHtml(back.text)}</a></p>
${codes.map(entryHtml).join('\n')}
</body>
</html>
`;
}

/** Nothing but the inline style may load: no script, no image, no frame of another site. */
const POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

export function registerErrorsPage(app: FastifyInstance, back?: BackLink): void {
  const page = renderErrorsPage(back);
  app.get(ERRORS_PAGE_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', POLICY)
      .header('cache-control', 'public, max-age=300')
      .send(page),
  );
}
