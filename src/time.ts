/** A calendar day in milliseconds (UTC has no daylight-saving change). */
export const DAY_MS = 86_400_000;

/** A time as the API writes timestamps: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SSZ`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function nowTimestamp(): string {
  return formatTimestamp(new Date());
}

/*
 * Dates and timestamps as the importer reads them and the API's `updated_since` takes them:
 * one reading for both, so a value the importer stores is one the API accepts.
 */

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Whether `text` is written as an RFC 3339 timestamp, whatever its values. */
export const hasTimestampSyntax = (text: string): boolean => TIMESTAMP.test(text);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

const HYPHEN = 45;
const COLON = 58;
const LETTER_T = 84;
const LETTER_Z = 90;

/** Whether the text begins with a day that exists written `YYYY-MM-DD`, checked by character. */
function startsWithCalendarDate(text: string): boolean {
  return (
    text.charCodeAt(4) === HYPHEN &&
    text.charCodeAt(7) === HYPHEN &&
    isCalendarDay(digitsAt(text, 0, 4), digitsAt(text, 5, 2), digitsAt(text, 8, 2))
  );
}

/** Whether the text is a day that exists written `YYYY-MM-DD`. */
export function isCalendarDate(text: string): boolean {
  return text.length === 10 && startsWithCalendarDate(text);
}

/** The number written by `length` digits at `at`, or -1 where a character is no digit. */
function digitsAt(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Whether the text is a real instant already in the stored form, as every export we have seen
 * writes them: checked by character, which costs a tenth of the regular expression (three
 * timestamps a record were ~8 % of a large import's parsing).
 */
function isStoredTimestamp(text: string): boolean {
  if (
    text.length !== 20 ||
    text.charCodeAt(10) !== LETTER_T ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    text.charCodeAt(19) !== LETTER_Z
  ) {
    return false;
  }
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  return (
    startsWithCalendarDate(text) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59
  );
}

/**
 * The instant an RFC 3339 date-time with an offset names, as `YYYY-MM-DDTHH:MM:SSZ` in UTC
 * whatever its year (an offset can carry 0001-01-01 or 9999-12-31 out of the years 0001–9999:
 * see `inStoredYears`), or null when the text is not one (or names a day or time that does not
 * exist). Fractions of a second are dropped; a leap second (:60, valid RFC 3339) is the
 * instant after :59, so it is read as the next whole second.
 */
export function utcInstant(text: string): string | null {
  if (isStoredTimestamp(text)) return text;
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, , offset] = m;
  const leap = s === '60';
  if (
    !isCalendarDay(Number(y), Number(mo), Number(d)) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    (Number(s) > 59 && !leap)
  ) {
    return null;
  }
  const millis = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${leap ? '59' : s}${offset}`);
  if (Number.isNaN(millis)) return null;
  return formatTimestamp(new Date(millis + (leap ? 1000 : 0)));
}

/** Whether an RFC 3339 timestamp carries a fraction of a second other than zero. */
export function hasFraction(text: string): boolean {
  const fraction = TIMESTAMP.exec(text)?.[7];
  return fraction !== undefined && /[1-9]/.test(fraction);
}

/** Whether a `utcInstant` falls in the years 0001–9999, which every database stores. */
export const inStoredYears = (utc: string): boolean => /^(?!0000)\d{4}-/.test(utc);

/** `utcInstant`, when it falls in the years 0001–9999; else null. */
export function normalizeTimestamp(text: string): string | null {
  const utc = utcInstant(text);
  return utc !== null && inStoredYears(utc) ? utc : null;
}
