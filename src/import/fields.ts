import { MoneyError, parseMoney } from '../money.ts';
import { formatTimestamp } from '../time.ts';

/** A problem with one field of one record; the importer adds the line number. */
export class FieldError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'FieldError';
  }
}

export const SHORT_TEXT_MAX = 255;
export const LONG_TEXT_MAX = 5000;
/** Ids are positive integers that every database and JavaScript hold exactly. */
export const ID_MAX = Number.MAX_SAFE_INTEGER;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const CODE = /^[a-z][a-z0-9_]{0,49}$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

export function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** The stored form `YYYY-MM-DDTHH:MM:SSZ`: its separators' positions and character codes. */
const STORED_SEPARATORS: ReadonlyArray<[at: number, code: number]> = [
  [4, 45],
  [7, 45],
  [10, 84],
  [13, 58],
  [16, 58],
  [19, 90],
];

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
  if (text.length !== 20) return false;
  for (const [at, code] of STORED_SEPARATORS) {
    if (text.charCodeAt(at) !== code) return false;
  }
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  return (
    isCalendarDay(digitsAt(text, 0, 4), digitsAt(text, 5, 2), digitsAt(text, 8, 2)) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59
  );
}

/**
 * RFC 3339 date-time with an offset → `YYYY-MM-DDTHH:MM:SSZ` in UTC, or null when the text is
 * not one (or names a day or time that does not exist). Fractions of a second are dropped.
 */
export function normalizeTimestamp(text: string): string | null {
  if (isStoredTimestamp(text)) return text;
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m;
  if (
    !isCalendarDay(Number(y), Number(mo), Number(d)) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    return null;
  }
  const millis = Date.parse(text.replace(/\.\d+/, ''));
  if (Number.isNaN(millis)) return null;
  const utc = formatTimestamp(new Date(millis));
  // An offset can carry 0001-01-01 or 9999-12-31 out of the years every database stores.
  return /^(?!0000)\d{4}-/.test(utc) ? utc : null;
}

/** Reads typed fields from one parsed NDJSON object, throwing FieldError on the first problem. */
export class FieldReader {
  constructor(
    private readonly record: Record<string, unknown>,
    private readonly prefix = '',
  ) {}

  fail(field: string, problem: string): FieldError {
    return new FieldError(`${this.prefix}${field}`, problem);
  }

  private value(field: string): unknown {
    return this.record[field];
  }

  private present(field: string): boolean {
    const v = this.value(field);
    return v !== undefined && v !== null;
  }

  private required(field: string): unknown {
    const v = this.value(field);
    if (v === undefined) throw this.fail(field, 'is required');
    if (v === null) throw this.fail(field, 'must not be null');
    return v;
  }

  private checkText(field: string, text: string, max: number): string {
    if (text.length > max) throw this.fail(field, `must be at most ${max} characters`);
    // PostgreSQL text cannot hold NUL; refusing it here keeps both databases alike.
    if (text.includes('\u0000')) throw this.fail(field, 'must not contain NUL characters');
    return text;
  }

  id(field: string): number {
    const v = this.required(field);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > ID_MAX) {
      throw this.fail(field, 'must be a positive integer');
    }
    return v;
  }

  optionalId(field: string): number | null {
    return this.present(field) ? this.id(field) : null;
  }

  text(field: string, max = SHORT_TEXT_MAX): string {
    const v = this.required(field);
    if (typeof v !== 'string') throw this.fail(field, 'must be a string');
    if (v.trim() === '') throw this.fail(field, 'must not be empty');
    return this.checkText(field, v, max);
  }

  optionalText(field: string, max = LONG_TEXT_MAX): string | null {
    if (!this.present(field)) return null;
    const v = this.value(field);
    if (typeof v !== 'string') throw this.fail(field, 'must be a string or null');
    return this.checkText(field, v, max);
  }

  oneOf<T extends string>(field: string, allowed: readonly T[]): T {
    const v = this.required(field);
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      throw this.fail(field, `must be one of ${allowed.join(', ')}`);
    }
    return v as T;
  }

  /** A lowercase code from the source system (payment_method, quota_type, …). */
  code(field: string): string {
    const v = this.required(field);
    if (typeof v !== 'string' || !CODE.test(v)) {
      throw this.fail(field, 'must be a lowercase code (a-z, 0-9, _), at most 50 characters');
    }
    return v;
  }

  optionalCode(field: string): string | null {
    return this.present(field) ? this.code(field) : null;
  }

  email(field: string): string {
    const v = this.text(field);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) throw this.fail(field, 'is not an email address');
    return v;
  }

  currency(field: string): string {
    const v = this.required(field);
    if (typeof v !== 'string' || !/^[A-Z]{3}$/.test(v)) {
      throw this.fail(field, 'must be a three-letter ISO 4217 code such as EUR');
    }
    return v;
  }

  boolean(field: string): boolean {
    const v = this.required(field);
    if (typeof v !== 'boolean') throw this.fail(field, 'must be true or false');
    return v;
  }

  integer(field: string, min: number, max: number): number {
    const v = this.required(field);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw this.fail(field, `must be an integer from ${min} to ${max}`);
    }
    return v;
  }

  number(field: string, min: number, max: number): number {
    const v = this.required(field);
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      throw this.fail(field, `must be a number from ${min} to ${max}`);
    }
    return v;
  }

  optionalNumber(field: string, min: number, max: number): number | null {
    return this.present(field) ? this.number(field, min, max) : null;
  }

  date(field: string): string {
    const v = this.required(field);
    if (typeof v !== 'string' || !isCalendarDate(v)) {
      throw this.fail(field, 'must be a real calendar date YYYY-MM-DD');
    }
    return v;
  }

  optionalDate(field: string): string | null {
    return this.present(field) ? this.date(field) : null;
  }

  timestamp(field: string): string {
    const v = this.required(field);
    const normalized = typeof v === 'string' ? normalizeTimestamp(v) : null;
    if (normalized === null) {
      throw this.fail(
        field,
        'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-05T09:30:00Z',
      );
    }
    return normalized;
  }

  optionalTimestamp(field: string): string | null {
    return this.present(field) ? this.timestamp(field) : null;
  }

  time(field: string): string {
    const v = this.required(field);
    if (typeof v !== 'string' || !/^([01]\d|2[0-3]):[0-5]\d$/.test(v)) {
      throw this.fail(field, 'must be a time HH:MM');
    }
    return v;
  }

  money(field: string, maxFractionDigits?: number): number {
    const v = this.required(field);
    try {
      return parseMoney(v, maxFractionDigits);
    } catch (error) {
      if (error instanceof MoneyError) throw this.fail(field, error.message);
      throw error;
    }
  }

  optionalMoney(field: string): number | null {
    return this.present(field) ? this.money(field) : null;
  }

  /** A reader for a nested object that may be absent or null. */
  optionalNested(field: string): FieldReader | null {
    return this.present(field) ? this.nested(field, this.value(field)) : null;
  }

  mustBeNull(field: string, why: string): void {
    if (this.present(field)) throw this.fail(field, why);
  }

  array(field: string, max: number): unknown[] {
    if (!this.present(field)) return [];
    const v = this.value(field);
    if (!Array.isArray(v)) throw this.fail(field, 'must be an array');
    if (v.length > max) throw this.fail(field, `must have at most ${max} entries`);
    return v;
  }

  /** A reader for a nested object whose errors are reported as `parent.child`. */
  nested(field: string, value: unknown): FieldReader {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.fail(field, 'must be an object');
    }
    return new FieldReader(value as Record<string, unknown>, `${this.prefix}${field}.`);
  }
}
