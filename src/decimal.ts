/**
 * Decimal numbers as written, for the import: a JSON number's text can say more than the binary
 * float JSON.parse makes of it (`1234567.8900000000001` becomes 1234567.89, `1e-400` becomes 0),
 * and money must be stored exactly as written or refused, never rounded on the way in.
 */

/** A JSON number that no float holds exactly, kept as its text (see `parseExactJson`). */
export class InexactNumber {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

/** `digits × 10^exponent`; `digits` has no leading or trailing zeros ('' for zero). */
export interface Decimal {
  negative: boolean;
  digits: string;
  exponent: number;
}

const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const ZERO = 48;

/**
 * A number's exact value from its text (the JSON grammar: `-12.50`, `1e-7`, `1.5E+21`), or
 * null when the text is not one. Linear in the text's length (zeros are trimmed by index: a
 * regular expression such as /0+$/ is quadratic on a long run of zeros that does not end).
 */
export function readDecimal(text: string): Decimal | null {
  const match = JSON_NUMBER.exec(text);
  if (!match) return null;
  const [, sign, whole = '', fraction = '', power = '0'] = match;
  const all = whole + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === ZERO) start++;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === ZERO) end--;
  const digits = all.slice(start, end);
  return {
    negative: sign === '-',
    digits,
    exponent: digits === '' ? 0 : Number(power) - fraction.length + (all.length - end),
  };
}

const sameValue = (a: Decimal | null, b: Decimal | null): boolean =>
  a !== null && b !== null && a.digits === b.digits && a.exponent === b.exponent;

/** Ahead of the reviver: a number of 16 or more digits, or one with an exponent. */
const LONG_NUMBER = /:\s*-?\d[\d.]{15}/;
const EXPONENT = /\d[eE]/;

function keepInexactNumbers(_key: string, value: unknown, context?: { source?: string }) {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const written = readDecimal(context.source);
  return sameValue(written, readDecimal(String(value))) ? value : new InexactNumber(context.source);
}

/**
 * JSON.parse, but a number whose text says more than its float (more than 15 significant
 * digits, a value too small or too large for a float) is an `InexactNumber` holding that text,
 * for the fields to refuse or, money, to read exactly. The text is read a second time, with a
 * reviver, only when it holds a long number or an exponent, so a usual line is parsed once.
 */
export function parseExactJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!LONG_NUMBER.test(text) && !EXPONENT.test(text)) return value;
  return JSON.parse(text, keepInexactNumbers as (key: string, value: unknown) => unknown);
}
