/**
 * Money is stored as an integer count of ten-thousandths (`*_e4` columns) so that a value
 * never passes through a binary float on its way in. Served as a JSON number, whose shortest
 * form is the decimal that was imported (199900 / 10000 prints as 19.99).
 */
export const MONEY_SCALE_DIGITS = 4;
const SCALE = 10 ** MONEY_SCALE_DIGITS;
/** 100 billion: keeps every stored integer far inside Number.MAX_SAFE_INTEGER. */
export const MONEY_MAX_UNITS = 100_000_000_000;

const DECIMAL = /^(-?)(\d{1,12})(?:\.(\d{1,12}))?$/;

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
  if (!match) throw new MoneyError(`"${text}" is not a plain decimal number`);
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

/** Making an Intl.NumberFormat costs microseconds; an import asks once per money field. */
const fractionDigitsByCurrency = new Map<string, number>();

/** Decimal places a currency uses (JPY 0, EUR 2, KWD 3), from the runtime's ISO 4217 data. */
export function currencyFractionDigits(currency: string): number {
  let digits = fractionDigitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
      .maximumFractionDigits as number;
    // Bounded: only well-formed three-letter codes get here, and the runtime knows few.
    if (fractionDigitsByCurrency.size < 1000) fractionDigitsByCurrency.set(currency, digits);
  }
  return digits;
}
