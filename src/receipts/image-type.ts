/** Image types a receipt original may have, recognised by their first bytes, never their name. */
export interface ImageType {
  contentType: string;
  extension: string;
}

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
    const brand = ascii(bytes, 8, 12);
    if (['heic', 'heix', 'mif1', 'msf1'].includes(brand)) {
      return { contentType: 'image/heic', extension: 'heic' };
    }
    if (['avif', 'avis'].includes(brand)) return { contentType: 'image/avif', extension: 'avif' };
  }
  if (ascii(bytes, 0, 4) === 'II*\0' || ascii(bytes, 0, 4) === 'MM\0*') {
    return { contentType: 'image/tiff', extension: 'tiff' };
  }
  return null;
}
