/** The processed variant's long edge is at most this many pixels. */
export const PROCESSED_MAX_EDGE = 2000;

/**
 * The most pixels an original may have (sharp's own default, 16,383 × 16,383, stated here): a
 * small file can claim a huge image (a decompression bomb), which would take gigabytes to
 * decode. A 200-megapixel phone photo is within it.
 */
export const MAX_RECEIPT_PIXELS = 0x3fff * 0x3fff;

/** Why an image cannot become a receipt, worded to follow its file's name. */
export class UnreadableImageError extends Error {}

/**
 * The processed receipt: upright (EXIF orientation applied), at most 2000 px on the long edge,
 * JPEG, and no metadata at all — sharp writes none unless asked, so EXIF (with GPS), XMP, IPTC,
 * ICC profiles and comments of the original are all dropped.
 */
export async function processReceipt(original: Uint8Array): Promise<Buffer> {
  // Imported by the first receipt processed (the module loader keeps it for the next), not with
  // this module: libvips and what it brings take ~20 MiB of a process's memory and ~30 ms to
  // load. `cdapi serve` loads this module with the admin API's import, which never takes a
  // receipt, so the service never loads sharp (docs/performance.md, item 110).
  const { default: sharp } = await import('sharp');
  try {
    return await sharp(original, { failOn: 'error', limitInputPixels: MAX_RECEIPT_PIXELS })
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
    const { message } = error as Error;
    throw new UnreadableImageError(
      /exceeds pixel limit/i.test(message)
        ? `has more than ${MAX_RECEIPT_PIXELS.toLocaleString('en-US')} pixels (16,383 × 16,383), the most a receipt may have`
        : /compression format has not been built in: HEVC/i.test(message)
          ? 'is a HEIC image coded in HEVC, as phone cameras write them, which cdapi cannot decode (its image library has no HEVC decoder): convert it to JPEG first'
          : `cannot be read as an image (${reasonOf(message)})`,
    );
  }
}

/**
 * The decoder's reason on one line: libvips writes one line a step, HEIF's with a "bad seek"
 * line for each place it looked, before the reason itself.
 */
const reasonOf = (message: string) =>
  message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^source: bad seek/.test(line))
    .join('; ');
