/**
 * Money is stored as an integer count of ten-thousandths (`*_e4` columns) so that a value
 * never passes through a binary float on its way in. Served as a JSON number, whose shortest
 * form is the decimal that was imported (199900 / 10000 prints as 19.99).
 */
export const MONEY_SCALE_DIGITS = 4;
const SCALE = 10 ** MONEY_SCALE_DIGITS;
/** 100 billion: keeps every stored integer far inside Number.MAX_SAFE_INTEGER. */
export const MONEY_MAX_UNITS = 100_000_000_000;

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

export class MoneyError extends Error {}

/**
 * Parses a decimal string ("1250.50") or a JSON number (1250.5) into ten-thousandths.
 * A JSON number is read through its shortest round-trip form, which is the decimal the
 * writer meant. `maxFractionDigits` is the currency's own precision (0 for JPY).
 */
export function parseMoney(value: unknown, maxFractionDigits = MONEY_SCALE_DIGITS): number {
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else throw new MoneyError('must be a decimal string or a number');
  const match = DECIMAL.exec(text);
  if (!match) {
    // A JSON number that is not one is written with an exponent (1e-7, 1e+30): say which bound
    // it passes.
    if (typeof value === 'number') {
      if (value < 0) throw new MoneyError('must not be negative');
      throw new MoneyError(
        value >= MONEY_MAX_UNITS
          ? 'is too large'
          : `has more than ${maxFractionDigits} decimal places`,
      );
    }
    // Not the text itself: a salary is one of these, and an error reaches logs and answers.
    throw new MoneyError('is not a plain decimal number (digits, a point and digits: 1250.50)');
  }
  const [, sign, whole = '0', fraction = ''] = match;
  if (sign === '-') throw new MoneyError('must not be negative');
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > maxFractionDigits) {
    throw new MoneyError(`has more than ${maxFractionDigits} decimal places`);
  }
  if (Number(whole) >= MONEY_MAX_UNITS) throw new MoneyError('is too large');
  return Number(whole) * SCALE + Number(significant.padEnd(MONEY_SCALE_DIGITS, '0'));
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
