import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { clockTime, dayOf, isoDate } from './calendar.ts';
import { digits, int, list, mulberry32, pick, type Rng, sample } from './random.ts';

/**
 * Demo receipt images: Turkish till slips drawn as SVG and rendered to JPEG with sharp, from
 * their own seeded PRNG, so the same seed always gives the same bytes.
 */

const RECEIPT_WIDTH = 600;
const RECEIPT_HEIGHT = 900;

/** Shop, address and what it sells, as printed on a Turkish till slip. */
const RECEIPT_SHOPS = [
  [
    'MİGROS',
    'Bağdat Cad. No: 214 Kadıköy/İstanbul',
    'SU 0,5 L | EKMEK | PEYNİR | ÇAY 1 KG | AYRAN',
  ],
  ['SİMİT SARAYI', 'İstiklal Cad. No: 45 Beyoğlu/İstanbul', 'SİMİT | POĞAÇA | ÇAY | SANDVİÇ'],
  ['KAHVE DÜNYASI', 'Atatürk Bulvarı No: 99 Çankaya/Ankara', 'TÜRK KAHVESİ | LATTE | KEK | SU'],
  ['KÖFTECİ YUSUF', 'E-5 Yanyol No: 12 Gebze/Kocaeli', 'KÖFTE PORSİYON | AYRAN | PİYAZ | SÜTLAÇ'],
  ['D&R', 'Zorlu Center Beşiktaş/İstanbul', 'DEFTER A5 | KALEM SETİ | KİTAP | AJANDA'],
] as const;

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Turkish receipt notation: 1.250,50 */
function receiptMoney(cents: number): string {
  const whole = Math.floor(cents / 100).toLocaleString('de-DE');
  return `${whole},${String(cents % 100).padStart(2, '0')}`;
}

/** A till slip on a table, slightly askew, like a phone photo of a receipt. */
function receiptSvg(rng: Rng, number: number): string {
  const [shop, address, goods] = pick(rng, RECEIPT_SHOPS);
  const lines = sample(rng, list(goods), int(rng, 2, 4)).map((name) => ({
    name,
    cents: int(rng, 15, 250) * 100 + pick(rng, [0, 50, 90]),
  }));
  const total = lines.reduce((sum, line) => sum + line.cents, 0);
  // A fixed period rather than today's date, so the same seed always draws the same images.
  const date = isoDate(dayOf(new Date(Date.UTC(2026, 0, 1))) + int(rng, 0, 120));
  const [year, month, day] = date.split('-');
  const time = clockTime(int(rng, 8 * 60, 21 * 60));
  const tilt = (rng() * 6 - 3).toFixed(2);
  const left = 110;
  const right = 490;
  const text = (x: number, y: number, content: string, attrs = '') =>
    `<text x="${x}" y="${y}" ${attrs}>${escapeXml(content)}</text>`;
  const rows: string[] = [
    text(300, 120, shop, 'text-anchor="middle" font-size="34" font-weight="bold"'),
    text(300, 155, address, 'text-anchor="middle" font-size="15"'),
    text(300, 178, `VKN: ${digits(rng, 10)}`, 'text-anchor="middle" font-size="15"'),
    text(left, 225, `TARİH: ${day}.${month}.${year}`),
    text(right, 225, `SAAT: ${time}`, 'text-anchor="end"'),
    text(left, 250, `FİŞ NO: ${String(number).padStart(4, '0')}`),
    `<line x1="${left}" y1="270" x2="${right}" y2="270" stroke="#333" stroke-dasharray="6 4"/>`,
  ];
  lines.forEach((line, i) => {
    const y = 305 + i * 34;
    rows.push(
      text(left, y, line.name),
      text(right, y, `*${receiptMoney(line.cents)}`, 'text-anchor="end"'),
    );
  });
  const sumY = 305 + lines.length * 34;
  rows.push(
    `<line x1="${left}" y1="${sumY - 10}" x2="${right}" y2="${sumY - 10}" stroke="#333" stroke-dasharray="6 4"/>`,
    text(left, sumY + 20, 'TOPKDV'),
    text(right, sumY + 20, `*${receiptMoney(Math.round(total / 6))}`, 'text-anchor="end"'),
    text(left, sumY + 60, 'TOPLAM', 'font-size="28" font-weight="bold"'),
    text(
      right,
      sumY + 60,
      `*${receiptMoney(total)}`,
      'text-anchor="end" font-size="28" font-weight="bold"',
    ),
    text(left, sumY + 100, pick(rng, ['KREDİ KARTI', 'NAKİT', 'BANKA KARTI'])),
    text(300, 790, 'TEŞEKKÜR EDERİZ', 'text-anchor="middle"'),
  );
  // A barcode of random bars: recognisable as a receipt even where no font is installed.
  let x = 170;
  while (x < 430) {
    const width = int(rng, 1, 4);
    rows.push(`<rect x="${x}" y="700" width="${width}" height="60" fill="#111"/>`);
    x += width + int(rng, 2, 5);
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${RECEIPT_WIDTH}" height="${RECEIPT_HEIGHT}">`,
    `<rect width="${RECEIPT_WIDTH}" height="${RECEIPT_HEIGHT}" fill="#7a6d5f"/>`,
    `<g transform="rotate(${tilt} 300 450)" font-family="DejaVu Sans Mono, monospace" font-size="19" fill="#222">`,
    '<rect x="86" y="46" width="440" height="820" fill="#000" opacity="0.3"/>',
    '<rect x="80" y="40" width="440" height="820" fill="#fcfbf7"/>',
    ...rows,
    '</g></svg>',
  ].join('\n');
}

/**
 * Odd-numbered receipts look like phone photos: stored sideways with EXIF orientation 6 and
 * camera tags, so receipt processing has metadata to strip and an image to turn upright.
 */
async function receiptJpeg(svg: string, photo: boolean): Promise<Buffer> {
  const image = sharp(Buffer.from(svg));
  if (!photo) return image.jpeg({ quality: 78, mozjpeg: true }).toBuffer();
  return image
    .rotate(-90) // orientation 6 means "turn 90° clockwise to view", so store it turned back
    .withExif({
      IFD0: {
        Make: 'Demo Phone Co.',
        Model: 'Receipt Cam 3',
        Software: 'cdapi demo generator',
        Copyright: 'Demo data, no rights reserved',
      },
    })
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 78, mozjpeg: true })
    .toBuffer();
}

export async function writeDemoReceipts(dir: string, count: number, seed = 1): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const rng = mulberry32(seed);
  const files: string[] = [];
  for (let number = 1; number <= count; number++) {
    const file = `receipt-${number}.jpg`;
    // One at a time: sharp is multi-threaded already, and thousands at once would eat memory.
    const jpeg = await receiptJpeg(receiptSvg(rng, number), number % 2 === 1);
    await writeFile(join(dir, file), jpeg);
    files.push(file);
  }
  return files;
}
