/** Image types a receipt original may have, recognised by their first bytes, never their name. */
export interface ImageType {
  contentType: string;
  extension: string;
}

const AVIF: ImageType = { contentType: 'image/avif', extension: 'avif' };
const HEIC: ImageType = { contentType: 'image/heic', extension: 'heic' };

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  String.fromCharCode(...bytes.subarray(start, end));

export function sniffImageType(bytes: Uint8Array): ImageType | null {
  if (bytes.length < 12) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { contentType: 'image/jpeg', extension: 'jpg' };
  }
  if (ascii(bytes, 0, 8) === '\x89PNG\r\n\x1a\n')
    return { contentType: 'image/png', extension: 'png' };
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') {
    return { contentType: 'image/webp', extension: 'webp' };
  }
  if (ascii(bytes, 4, 8) === 'ftyp') {
    // The major brand, else (a generic `mif1`) the compatible brands name the coding.
    const [major = '', ...compatible] = ftypBrands(bytes);
    if (major === 'avif') return AVIF;
    if (major === 'heic' || major === 'heix') return HEIC;
    if (major === 'mif1' || major === 'msf1') {
      return compatible.includes('avif') && !compatible.includes('heic') ? AVIF : HEIC;
    }
  }
  if (ascii(bytes, 0, 4) === 'II*\0' || ascii(bytes, 0, 4) === 'MM\0*') {
    return { contentType: 'image/tiff', extension: 'tiff' };
  }
  return null;
}

/**
 * The brands of an ISO media file's `ftyp` box: the major brand, then the compatible ones
 * (the box's size, then `ftyp`, the major brand, its version, the compatible brands).
 */
function ftypBrands(bytes: Uint8Array): string[] {
  const size = Math.min(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0), bytes.length);
  const brands = [ascii(bytes, 8, 12)];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(ascii(bytes, at, at + 4));
  return brands;
}
