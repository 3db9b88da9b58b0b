import { type Decimal, InexactNumber, PLAIN_DECIMAL, readDecimal } from './decimal.ts';

/**
 * Money is stored as an integer count of ten-thousandths (`*_e4` columns) so that a value
 * never passes through a binary float on its way in. Served as a JSON number, whose shortest
 * form is the decimal that was imported (199900 / 10000 prints as 19.99).
 */
const MONEY_SCALE_DIGITS = 4;
const SCALE = 10 ** MONEY_SCALE_DIGITS;
/** Digits of the whole part: below 100 billion, every stored integer far inside 2^53. */
const MAX_WHOLE_DIGITS = 11;

export class MoneyError extends Error {}

/**
 * Parses a decimal string ("1250.50") or a JSON number (1250.5) into ten-thousandths, exactly
 * as written. A JSON number is read through its shortest round-trip form, which is its text
 * unless that text says more than a float holds (`1234567.8900000000001`, `1e-400`): the
 * importer hands such a number over as an `InexactNumber` with its text, read exactly here.
 * `maxFractionDigits` is the currency's own precision (0 for JPY).
 */
export function parseMoney(value: unknown, maxFractionDigits = MONEY_SCALE_DIGITS): number {
  let decimal: Decimal | null;
  if (typeof value === 'string') {
    decimal = readDecimal(value.trim(), PLAIN_DECIMAL);
    // Not the text itself: a salary is one of these, and an error reaches logs and answers.
    if (decimal === null) {
      throw new MoneyError('is not a plain decimal number (digits, a point and digits: 1250.50)');
    }
  } else if (typeof value === 'number' && Number.isFinite(value)) {
    // String(-0) is "0": a JSON -0 carries its sign as "-0" does.
    decimal = readDecimal(Object.is(value, -0) ? '-0' : String(value));
  } else if (value instanceof InexactNumber) {
    decimal = readDecimal(value.source);
  } else {
    throw new MoneyError('must be a decimal string or a number');
  }
  if (decimal === null) throw new MoneyError('must be a decimal string or a number');
  const { negative, digits, exponent } = decimal;
  // `-0` too: import-format.md refuses a sign, and a zero written with one is a mistake.
  if (negative) {
    throw new MoneyError(
      digits === '' ? 'must not be written with a minus sign' : 'must not be negative',
    );
  }
  if (digits === '') return 0;
  if (-exponent > maxFractionDigits) {
    throw new MoneyError(`has more than ${maxFractionDigits} decimal places`);
  }
  // digits × 10^exponent has digits + exponent digits before its point.
  if (digits.length + exponent > MAX_WHOLE_DIGITS) throw new MoneyError('is too large');
  // At most 11 + 4 digits in all: far inside Number.MAX_SAFE_INTEGER.
  return Number(digits + '0'.repeat(exponent + MONEY_SCALE_DIGITS));
}

/** Ten-thousandths → the JSON number that prints as the stored decimal. */
export function moneyToNumber(units: number): number {
  return units / SCALE;
}

/**
 * The minor units of ISO 4217 (its list one, 2025) where they are not 2. Not the runtime's
 * `Intl` data: that is CLDR's, which gives what is shown, not what the currency has (HUF, IDR,
 * COP 0 and IQD 0, where ISO 4217 has 2, 2, 2 and 3), so real amounts such as 1250.50 HUF were
 * refused. Codes ISO 4217 lists without minor units (XAU, XDR) and unknown ones take 2.
 */
const ISO_4217_MINOR_UNITS: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'
      .split(' ')
      .map((code) => [code, 0]),
  ),
  ...Object.fromEntries('BHD IQD JOD KWD LYD OMR TND'.split(' ').map((code) => [code, 3])),
  CLF: 4,
  UYW: 4,
};

/** Decimal places a currency has (JPY 0, EUR 2, KWD 3), by ISO 4217. */
export function currencyFractionDigits(currency: string): number {
  return ISO_4217_MINOR_UNITS[currency] ?? 2;
}
