import compress from '@fastify/compress';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.ts';

/** The content codings an admin request body may come in (`Content-Encoding`), on every Node. */
export const REQUEST_ENCODINGS = ['gzip', 'deflate', 'br', 'identity'] as const;

/** The `code` a body that does not decode as its `Content-Encoding` says is given. */
const UNDECODABLE = 'CDAPI_UNDECODABLE_BODY';

/**
 * Admin request bodies in `Content-Encoding: gzip`, `deflate` or `br` are decoded as they arrive
 * (a large NDJSON import is sent in a fraction of its size), before the body limit is counted;
 * any other coding is refused with 415 and the codings taken in `Accept-Encoding` (RFC 9110
 * §15.5.16), never read as if it were plain. Codings are case-insensitive, and `x-gzip` is gzip.
 */
export async function decodeRequestBodies(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request) => {
    const { headers } = request;
    const header = headers['content-encoding'];
    if (header === undefined) return;
    // A request without a body (a GET, an activate) has nothing to decode, whatever it says.
    const hasBody =
      headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';
    if (!hasBody) {
      delete headers['content-encoding'];
      return;
    }
    const coding = header.trim().toLowerCase();
    headers['content-encoding'] = coding === 'x-gzip' ? 'gzip' : coding;
  });
  await app.register(compress, {
    globalCompression: false,
    globalDecompression: true,
    requestEncodings: [...REQUEST_ENCODINGS],
    onUnsupportedRequestEncoding: (coding: string) =>
      new ApiError(
        'unsupported_media_type',
        `The body's Content-Encoding ${JSON.stringify(coding)} is not one this listener decodes: send it as gzip, deflate, br or without one.`,
        { headers: { 'accept-encoding': REQUEST_ENCODINGS.join(', ') } },
      ),
    // The plugin copies this error's own enumerable fields onto the decoder's error, which
    // reaches the error handler.
    onInvalidRequestPayload: () =>
      Object.assign(new Error('undecodable body'), { statusCode: 400, code: UNDECODABLE }),
  });
}

/** The 400 of a body that does not decode as its `Content-Encoding` says, or undefined. */
export function undecodableBody(
  error: FastifyError,
  request: FastifyRequest,
): ApiError | undefined {
  if (error.code !== UNDECODABLE) return undefined;
  const coding = request.headers['content-encoding'];
  // The rest of a body that stopped decoding before it had all come is not waited for: the
  // connection closes after the answer.
  return new ApiError(
    'bad_request',
    `The request body is not valid ${coding} data, as its Content-Encoding says.`,
    request.raw.complete ? {} : { headers: { connection: 'close' } },
  );
}
