import type { NewCompany } from '../db/database.ts';
import { type FieldReader, flag } from './fields.ts';
import { recordType } from './record-type.ts';

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function parseCompany(r: FieldReader): { row: NewCompany } {
  const timezone = r.text('timezone', 64);
  if (!isTimeZone(timezone)) throw r.fail('timezone', 'is not an IANA time-zone name');
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
