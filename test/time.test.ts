import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCalendarDate, normalizeTimestamp } from '../src/time.ts';

describe('import dates', () => {
  it('accepts real calendar dates of the years 0001–9999, leap days included', () => {
    for (const date of ['2024-02-29', '2000-02-29', '0001-01-01', '0050-06-15', '9999-12-31']) {
      assert.equal(isCalendarDate(date), true, date);
    }
  });

  it('refuses days that do not exist and other shapes', () => {
    for (const date of [
      '2023-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
      '0000-01-01',
      '2026-1-01',
      '2026-01-01T00:00:00Z',
      '2026/01/01',
      '2026-01-1a',
      '+026-01-01',
      '２０２６-01-01',
      ' 2026-01-1',
    ]) {
      assert.equal(isCalendarDate(date), false, date);
    }
  });
});

describe('import timestamps', () => {
  it('keeps the stored form as it is and converts every other RFC 3339 form to it', () => {
    const cases: Array<[string, string]> = [
      ['2026-02-20T08:00:00Z', '2026-02-20T08:00:00Z'],
      ['2026-02-20t08:00:00z', '2026-02-20T08:00:00Z'],
      ['2026-02-20 08:00:00Z', '2026-02-20T08:00:00Z'],
      ['2026-02-20T08:00:00.999Z', '2026-02-20T08:00:00Z'],
      ['2026-02-20T08:00:00+03:00', '2026-02-20T05:00:00Z'],
      ['2026-01-01T00:00:00-00:30', '2026-01-01T00:30:00Z'],
      ['2024-02-29T23:59:59Z', '2024-02-29T23:59:59Z'],
      ['0001-01-01T05:00:00+03:00', '0001-01-01T02:00:00Z'],
      // A leap second is the instant after :59: the next whole second (as updated_since reads it).
      ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00Z'],
      ['2016-12-31T23:59:60.5Z', '2017-01-01T00:00:00Z'],
      ['2017-01-01T02:59:60+03:00', '2017-01-01T00:00:00Z'],
      ['2026-02-20T08:00:60Z', '2026-02-20T08:01:00Z'],
    ];
    for (const [text, stored] of cases) assert.equal(normalizeTimestamp(text), stored, text);
  });

  it('refuses times that do not exist, no offset, and offsets that leave the years 0001–9999', () => {
    for (const text of [
      '2023-02-29T08:00:00Z',
      '2026-02-20T24:00:00Z',
      '2026-02-20T08:60:00Z',
      '2026-02-20T08:00:00',
      '2026-02-20',
      '0001-01-01T00:00:00+03:00',
      '9999-12-31T23:00:00-03:00',
      // The stored form's shape, each with one thing wrong.
      '0000-01-01T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-02-20T08:00:61Z',
      '9999-12-31T23:59:60Z',
      '2026-02-2aT08:00:00Z',
      '2026-02-20T08-00:00Z',
      '2026/02/20T08:00:00Z',
    ]) {
      assert.equal(normalizeTimestamp(text), null, text);
    }
  });
});
