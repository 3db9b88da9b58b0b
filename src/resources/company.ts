import type { NewCompany } from '../db/database.ts';
import { type FieldReader, flag } from './fields.ts';
import { recordType } from './record-type.ts';

/**
 * The IANA time-zone name `name` stands for, as the IANA database spells it; null when it names
 * none. Letter case is not the client's to get right only by luck: `europe/istanbul` is stored
 * as `Europe/Istanbul` (libraries such as Java's `ZoneId` refuse the other), an old alias as
 * given when spelled so (`US/Eastern`), else as the zone it stands for. ECMAScript's offset
 * zones (`+03:00`), which `Intl` takes too, are no IANA names: every one starts with a letter.
 */
export function ianaTimeZone(name: string): string | null {
  if (!/^[A-Za-z]/.test(name)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved.toLowerCase() === name.toLowerCase()) return resolved;
  return name.split('/').every((part) => /^[A-Z0-9]/.test(part)) ? name : resolved;
}

function parseCompany(r: FieldReader): { row: NewCompany } {
  const timezone = ianaTimeZone(r.text('timezone', 64));
  if (timezone === null) throw r.fail('timezone', 'is not an IANA time-zone name');
  return {
    row: { id: r.id('id'), name: r.text('name'), timezone, active: flag(r.boolean('active')) },
  };
}

/** The root of every other record: its tenant. */
export const company = recordType({
  type: 'company',
  table: 'companies',
  noun: ['company', 'companies'],
  embedded: [],
  unserved: [],
  parents: [],
  children: [],
  receipt: false,
  list: null,
  parse: parseCompany,
});
