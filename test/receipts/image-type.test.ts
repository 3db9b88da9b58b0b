import assert from 'node:assert/strict';
import { it } from 'node:test';
import sharp from 'sharp';
import { sniffImageType } from '../../src/receipts/image-type.ts';

/** `bytes` with the `ftyp` box's brands written over: the major one, then compatible ones. */
function rebranded(bytes: Buffer, major: string, compatible: string[]): Buffer {
  const copy = Buffer.from(bytes);
  copy.write(major, 8, 'latin1');
  const size = copy.readUInt32BE(0);
  compatible.forEach((brand, i) => {
    assert.ok(16 + 4 * (i + 1) <= size, 'the box holds that many brands');
    copy.write(brand, 16 + 4 * i, 'latin1');
  });
  return copy;
}

it('tells an AVIF from a HEIC by the ftyp box’s brands, the compatible ones too', async () => {
  const avif = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c33' } })
    .avif()
    .toBuffer();
  const AVIF = { contentType: 'image/avif', extension: 'avif' };
  const HEIC = { contentType: 'image/heic', extension: 'heic' };
  assert.deepEqual(sniffImageType(avif), AVIF);
  // A generic major brand: the compatible ones say AV1 (sharp writes avif, mif1, miaf, …).
  const compatible = avif.subarray(16, avif.readUInt32BE(0)).toString('latin1');
  assert.ok(compatible.match(/.{4}/g)?.includes('avif'));
  assert.deepEqual(sniffImageType(rebranded(avif, 'mif1', [])), AVIF);
  assert.deepEqual(sniffImageType(rebranded(avif, 'msf1', [])), AVIF);
  assert.deepEqual(sniffImageType(rebranded(avif, 'mif1', ['heic'])), HEIC);
  assert.deepEqual(sniffImageType(rebranded(avif, 'heic', [])), HEIC);
  // An image sequence is not a receipt type: no decoder here reads one.
  assert.equal(sniffImageType(rebranded(avif, 'avis', ['avis', 'msf1'])), null);
});
