import { ReceiptError } from './errors.ts';
import type { Receipt, ReceiptVariant } from './types.ts';

/** An original's ETag names the SHA-256 of its bytes: `"<64 hex digits>-original"`. */
const ORIGINAL_ETAG = /^"([0-9a-f]{64})-original"$/;

/**
 * The receipt a signed URL answered, checked whole before it is returned (see `ReceiptError`):
 * an image type; as many bytes as `Content-Length` says (unless a proxy encoded them); the
 * processed JPEG ending with its end-of-image marker, as the service writes it; an original
 * hashing to the SHA-256 its ETag names. A page that is no image, or half an image ended
 * cleanly (chunked, or a closed connection without a length), was otherwise stored as the
 * receipt.
 */
export async function checkedReceipt(
  response: Response,
  variant: ReceiptVariant,
): Promise<Receipt> {
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  if (!/^image\//i.test(contentType)) {
    await response.body?.cancel();
    throw new ReceiptError(
      `the receipt's URL answered ${contentType}, not an image (a proxy's page?)`,
      false,
    );
  }
  const data = new Uint8Array(await response.arrayBuffer());
  const cutShort = (why: string) =>
    new ReceiptError(`the receipt arrived cut short (${why})`, true);
  // The length of the bytes sent: those fetch decoded differ where a proxy compressed them.
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const length = encoded ? null : response.headers.get('content-length');
  if (length !== null && Number(length) !== data.length) {
    throw cutShort(`${data.length} of ${length} bytes`);
  }
  if (variant === 'processed' && /^image\/jpeg/i.test(contentType) && !endsJpeg(data)) {
    throw cutShort('the JPEG has no end-of-image marker');
  }
  const digest = ORIGINAL_ETAG.exec(response.headers.get('etag') ?? '')?.[1];
  if (variant === 'original' && digest !== undefined && (await sha256Hex(data)) !== digest) {
    throw cutShort('its SHA-256 is not the one its ETag names');
  }
  return { data, contentType };
}

const endsJpeg = (data: Uint8Array) =>
  data.length >= 4 &&
  data[0] === 0xff &&
  data[1] === 0xd8 &&
  data.at(-2) === 0xff &&
  data.at(-1) === 0xd9;

async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
