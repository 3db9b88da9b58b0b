import { hash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ERRORS_PAGE_PATH } from '../../schemas/problems.ts';
import { API_PREFIX } from '../deps.ts';

/** Whether an `If-None-Match` value names `etag` (weak comparison, RFC 9110 §13.1.2). */
export function ifNoneMatchNames(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/** The types of body compression may apply to: text, JSON, JavaScript, YAML, XML, SVG. */
const COMPRESSIBLE =
  /^(text\/|image\/svg\+xml|application\/([\w.+-]*json|javascript|(x-)?yaml|[\w.+-]*xml)\b)/i;

/** A static file that is an image (the reference page's icons). */
const IMAGE_PATH = /\.(png|jpe?g|gif|ico|webp)(\?|$)/i;
/** The route of the receipt images (src/http/routes/receipts.ts). */
const RECEIPT_FILE_ROUTE = `${API_PREFIX}/receipt-files/:expenseId/:variant`;

/**
 * The documents outside the operations that carry an ETag as they do: the API description (120 KB,
 * which tools fetch again and again; `/docs/json` and `/docs/yaml` are the reference page's copies)
 * and the errors page. The reference page's own files carry @fastify/static's tags.
 */
const TAGGED_DOCUMENTS = new Set([
  `${API_PREFIX}/openapi.json`,
  '/docs/json',
  '/docs/yaml',
  ERRORS_PAGE_PATH,
]);

/**
 * Conditional requests (docs/api.md "Responses"): every 200 JSON answer of an API operation carries
 * an ETag, a digest of its body, so the tag changes exactly when the answer would. The same request
 * with a matching `If-None-Match` gets a 304 without a body; the request was still counted and
 * checked. The tag is weak: a compressed body is the same answer. The documents above are tagged
 * the same way. Registered on the root before compression, whose hook must see the body afterwards.
 */
export function registerETags(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const operation = request.routeOptions.config.scope !== undefined;
    // A body may go out compressed or not, so every answer of an operation (an error over 1 KB
    // is compressed too; a 304, a redirect and an uncompressed 200 alike), and every text the
    // other paths send (the reference page, its files, the errors page, the document), says it
    // varies by Accept-Encoding, as RFC 9110 §12.5.5 asks; @fastify/compress adds it only where
    // it compresses, and keeps this one.
    // A 304 carries no type: it says what its 200 would (RFC 9110 §15.4.5), an image's nothing.
    const image = IMAGE_PATH.test(request.url) || request.routeOptions.url === RECEIPT_FILE_ROUTE;
    const type =
      reply.statusCode === 304 && !image
        ? 'text/plain'
        : String(reply.getHeader('content-type') ?? '');
    if (operation || COMPRESSIBLE.test(type)) {
      reply.header('vary', 'accept-encoding');
    }
    if (reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const document = TAGGED_DOCUMENTS.has(request.routeOptions.url ?? '');
    if (!(document || (operation && type.startsWith('application/json')))) return payload;
    // Encoded once, here: hashing the text encoded a copy of it, and compression or the socket
    // (after Buffer.byteLength's own pass over it) encoded it again.
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const etag = `W/"${hash('sha1', body, 'base64url')}"`;
    reply.header('etag', etag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch && ifNoneMatchNames(ifNoneMatch, etag)) {
      reply.code(304);
      reply.removeHeader('content-type');
      reply.removeHeader('content-length');
      // No body and no Content-Length (RFC 9110 §8.6: it would have to be the 200's). A HEAD
      // gets an empty stream, as Fastify's own HEAD hook, which runs after this one, would set
      // Content-Length: 0 for anything else and cannot take null.
      return request.method === 'HEAD' ? Readable.from([]) : null;
    }
    return body;
  });
}
