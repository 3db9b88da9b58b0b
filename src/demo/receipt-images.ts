import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { clockTime } from './calendar.ts';
import { digits, int, mulberry32 } from './random.ts';

/**
 * Demo receipt images: the till slip of one expense, drawn as SVG from the expense's own
 * merchant, date, items, tax, total, currency and payment method, and rendered to JPEG with
 * sharp. What the slip adds (time, tax number, slip number) comes from a PRNG seeded with the
 * expense's id, so the same expense always gives the same bytes.
 */

const RECEIPT_WIDTH = 600;
const RECEIPT_HEIGHT = 900;

/** The fields of an expense record (docs/import-format.md) that its slip shows. */
export interface ReceiptExpense {
  id: number;
  merchant_name: string;
  expense_date: string;
  amount: string;
  currency: string;
  tax_amount: string;
  payment_method: string;
  items: ReadonlyArray<{ name: string; quantity: number; price: string }>;
}

/** How a slip is printed: Turkish for lira, English for anything else. */
interface SlipLanguage {
  locale: string;
  date: string;
  time: string;
  number: string;
  taxId: string;
  tax: string;
  total: string;
  thanks: string;
  payments: Record<string, string>;
}

/** 125050 cents → `1.250,50`: both slips group thousands with dots and use a decimal comma. */
function grouped(cents: number): string {
  const whole = Math.floor(cents / 100).toLocaleString('de-DE');
  return `${whole},${String(cents % 100).padStart(2, '0')}`;
}

const TURKISH: SlipLanguage = {
  locale: 'tr-TR',
  date: 'TARİH',
  time: 'SAAT',
  number: 'FİŞ NO',
  taxId: 'VKN',
  tax: 'TOPKDV',
  total: 'TOPLAM',
  thanks: 'TEŞEKKÜR EDERİZ',
  payments: {
    corporate_card: 'KREDİ KARTI',
    personal_card: 'KREDİ KARTI',
    cash: 'NAKİT',
    bank_transfer: 'HAVALE',
  },
};

const ENGLISH: SlipLanguage = {
  locale: 'en',
  date: 'DATE',
  time: 'TIME',
  number: 'RECEIPT',
  taxId: 'VAT ID',
  tax: 'INCL. VAT',
  total: 'TOTAL',
  thanks: 'THANK YOU',
  payments: {
    corporate_card: 'CARD',
    personal_card: 'CARD',
    cash: 'CASH',
    bank_transfer: 'BANK TRANSFER',
  },
};

/** `"1250.50"` → 125050, exactly (demo amounts have at most two decimals). */
function cents(decimal: string): number {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The expense's slip on a table, slightly askew, like a phone photo of a receipt. */
export function receiptSvg(expense: ReceiptExpense): string {
  const rng = mulberry32(expense.id);
  const language = expense.currency === 'TRY' ? TURKISH : ENGLISH;
  // A lira slip prints `*1.250,50 TL`; others name their currency.
  const total = cents(expense.amount);
  const totalText =
    expense.currency === 'TRY' ? `*${grouped(total)} TL` : `${grouped(total)} ${expense.currency}`;
  const [year, month, day] = expense.expense_date.split('-');
  const time = clockTime(int(rng, 8 * 60, 21 * 60));
  const tilt = (rng() * 6 - 3).toFixed(2);
  const left = 110;
  const right = 490;
  const shop = expense.merchant_name.toLocaleUpperCase(language.locale);
  // Monospace glyphs are about 0.6 em wide; a long name gets smaller to fit the slip.
  const shopSize = Math.min(34, Math.floor(390 / (0.6 * shop.length)));
  const text = (x: number, y: number, content: string, attrs = '') =>
    `<text x="${x}" y="${y}" ${attrs}>${escapeXml(content)}</text>`;
  const rows: string[] = [
    text(300, 120, shop, `text-anchor="middle" font-size="${shopSize}" font-weight="bold"`),
    text(300, 165, `${language.taxId}: ${digits(rng, 10)}`, 'text-anchor="middle" font-size="15"'),
    text(left, 225, `${language.date}: ${day}.${month}.${year}`),
    text(right, 225, `${language.time}: ${time}`, 'text-anchor="end"'),
    text(left, 250, `${language.number}: ${String(expense.id % 10_000).padStart(4, '0')}`),
    `<line x1="${left}" y1="270" x2="${right}" y2="270" stroke="#333" stroke-dasharray="6 4"/>`,
  ];
  expense.items.forEach((item, i) => {
    const y = 305 + i * 34;
    const name = item.quantity === 1 ? item.name : `${item.quantity} x ${item.name}`;
    const line = Math.round(cents(item.price) * item.quantity);
    rows.push(
      text(left, y, name.toLocaleUpperCase(language.locale).slice(0, 22)),
      text(right, y, grouped(line), 'text-anchor="end"'),
    );
  });
  const sumY = 305 + expense.items.length * 34;
  rows.push(
    `<line x1="${left}" y1="${sumY - 10}" x2="${right}" y2="${sumY - 10}" stroke="#333" stroke-dasharray="6 4"/>`,
    text(left, sumY + 20, language.tax),
    text(right, sumY + 20, grouped(cents(expense.tax_amount)), 'text-anchor="end"'),
    text(left, sumY + 60, language.total, 'font-size="28" font-weight="bold"'),
    text(right, sumY + 60, totalText, 'text-anchor="end" font-size="26" font-weight="bold"'),
    text(left, sumY + 100, language.payments[expense.payment_method] ?? expense.payment_method),
    text(300, 790, language.thanks, 'text-anchor="middle"'),
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
 * Every other receipt looks like a phone photo: stored sideways with EXIF orientation 6 and
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

/**
 * Writes the expense's slip as `receipt-<id>.jpg` in `dir` and returns that name; `photo`
 * makes it look like a phone photo (see receiptJpeg).
 */
export async function writeExpenseReceipt(
  dir: string,
  expense: ReceiptExpense,
  photo: boolean,
): Promise<string> {
  const file = receiptFileName(expense.id);
  await writeFile(join(dir, file), await receiptJpeg(receiptSvg(expense), photo));
  return file;
}

export const receiptFileName = (expenseId: number): string => `receipt-${expenseId}.jpg`;
