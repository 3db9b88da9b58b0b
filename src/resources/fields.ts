import { InexactNumber } from '../decimal.ts';
import { MoneyError, parseMoney } from '../money.ts';
import { inStoredYears, isCalendarDate, utcInstant } from '../time.ts';

/** A problem with one field of one record; the importer adds the line number. */
export class FieldError extends Error {
  readonly field: string;
  readonly problem: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
    this.name = 'FieldError';
  }
}

/** A boolean as the tables store it. */
export const flag = (value: boolean): 0 | 1 => (value ? 1 : 0);

export const SHORT_TEXT_MAX = 255;
export const LONG_TEXT_MAX = 5000;
/** Ids are positive integers that every database and JavaScript hold exactly. */
export const ID_MAX = Number.MAX_SAFE_INTEGER;

const CODE = /^[a-z][a-z0-9_]{0,49}$/;

/**
 * The characters of a text as PostgreSQL counts them (and the API's query limits do): code
 * points, so an emoji written as a surrogate pair is one, not two UTF-16 units.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}

/** Reads typed fields from one parsed NDJSON object, throwing FieldError on the first problem. */
export class FieldReader {
  private readonly record: Record<string, unknown>;
  private readonly prefix: string;

  constructor(record: Record<string, unknown>, prefix: string = '') {
    this.record = record;
    this.prefix = prefix;
  }

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
    if (text.length > max && characterCount(text) > max) {
      throw this.fail(field, `must be at most ${max} characters`);
    }
    // PostgreSQL text cannot hold NUL; refusing it here keeps both databases alike.
    if (text.includes('\u0000')) throw this.fail(field, 'must not contain NUL characters');
    return text;
  }

  /** A number's value, refused with `rule` when it is none or its text says more than it holds. */
  private numeric(field: string, rule: string): number {
    const v = this.required(field);
    if (v instanceof InexactNumber) {
      // Past a float's range (`1e400`, `-1e400`) it is too large or small, whatever its
      // digits; else too precise.
      const value = Number(v.source);
      const why = Number.isFinite(value)
        ? 'it is written with more digits than a number holds exactly'
        : `it is too ${value > 0 ? 'large' : 'small'}`;
      throw this.fail(field, `${rule}: ${why}`);
    }
    if (typeof v !== 'number') throw this.fail(field, rule);
    return v;
  }

  id(field: string): number {
    const rule = `must be a positive integer of at most ${ID_MAX} (2^53 − 1)`;
    const v = this.numeric(field, rule);
    if (!Number.isInteger(v) || v < 1 || v > ID_MAX) throw this.fail(field, rule);
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
    const rule = `must be an integer from ${min} to ${max}`;
    const v = this.numeric(field, rule);
    if (!Number.isInteger(v) || v < min || v > max) throw this.fail(field, rule);
    return v;
  }

  number(field: string, min: number, max: number): number {
    const rule = `must be a number from ${min} to ${max}`;
    const v = this.numeric(field, rule);
    if (!Number.isFinite(v) || v < min || v > max) throw this.fail(field, rule);
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
    const utc = typeof v === 'string' ? utcInstant(v) : null;
    if (utc === null) {
      throw this.fail(
        field,
        'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-05T09:30:00Z',
      );
    }
    if (!inStoredYears(utc)) {
      throw this.fail(field, `must fall within the years 0001–9999 in UTC (it is ${utc})`);
    }
    return utc;
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
