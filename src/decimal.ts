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

/** Money's text in a string: digits, and a point and digits (`JSON_NUMBER`'s groups, no exponent). */
export const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * A number's exact value from its text, written in `grammar` (by default JSON's: `-12.50`,
 * `1e-7`, `1.5E+21`), or null when the text is not one. Linear in the text's length (zeros are
 * trimmed by index: a regular expression such as /0+$/ is quadratic on a long run of zeros that
 * does not end).
 */
export function readDecimal(text: string, grammar: RegExp = JSON_NUMBER): Decimal | null {
  const match = grammar.exec(text);
  if (!match) return null;
  const [, sign, whole = '', fraction = '', power = ''] = match;
  const all = whole + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === ZERO) start++;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === ZERO) end--;
  const digits = all.slice(start, end);
  return {
    negative: sign === '-',
    digits,
    exponent: digits === '' ? 0 : Number(power || 0) - fraction.length + (all.length - end),
  };
}

const sameValue = (a: Decimal | null, b: Decimal | null): boolean =>
  a !== null && b !== null && a.digits === b.digits && a.exponent === b.exponent;

const NINE = 57;
const POINT = 46;
const MINUS = 45;

/**
 * Whether a value of the line may be a number its float does not hold: 16 or more digits (and
 * points) or an exponent. Only values after a `:` are looked at, as every number a record can
 * hold is an object's member (a number in an array is never a valid field; a `:` inside a
 * string only makes the line take the slower, exact parse). A scan by character: two regular
 * expressions cost twice as much, a third of JSON.parse's own time.
 */
function mayHoldInexactNumber(text: string): boolean {
  let colon = text.indexOf(':');
  while (colon !== -1) {
    let at = colon + 1;
    let code = text.charCodeAt(at);
    while (code === 32 || code === 9 || code === 10 || code === 13) code = text.charCodeAt(++at);
    if (code === MINUS) code = text.charCodeAt(++at);
    if (code >= ZERO && code <= NINE) {
      const start = at;
      while ((code >= ZERO && code <= NINE) || code === POINT) code = text.charCodeAt(++at);
      if (at - start > 15 || code === 101 || code === 69) return true; // e, E
    }
    colon = text.indexOf(':', at);
  }
  return false;
}

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
  if (!mayHoldInexactNumber(text)) return value;
  return JSON.parse(text, keepInexactNumbers as (key: string, value: unknown) => unknown);
}
