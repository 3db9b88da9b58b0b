import sharp from 'sharp';

/** The processed variant's long edge is at most this many pixels. */
export const PROCESSED_MAX_EDGE = 2000;

export class UnreadableImageError extends Error {}

/**
 * The processed receipt: upright (EXIF orientation applied), at most 2000 px on the long edge,
 * JPEG, and no metadata at all — sharp writes none unless asked, so EXIF (with GPS), XMP, IPTC,
 * ICC profiles and comments of the original are all dropped.
 */
export async function processReceipt(original: Uint8Array): Promise<Buffer> {
  try {
    return await sharp(original, { failOn: 'error' })
      .rotate()
      .resize({
        width: PROCESSED_MAX_EDGE,
        height: PROCESSED_MAX_EDGE,
        fit: 'inside',
        withoutEnlargement: true,
      })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 85, mozjpeg: true })
      .toBuffer();
  } catch (error) {
    throw new UnreadableImageError((error as Error).message);
  }
}
