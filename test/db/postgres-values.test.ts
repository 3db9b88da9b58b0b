import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { testDialects, useDatabase } from '../helpers/databases.ts';

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

describe('values read from PostgreSQL', { skip: postgres?.skip ?? false }, () => {
  it('come back in the forms SQLite stores: timestamps as UTC ISO text in whole seconds', async (t) => {
    const { handle } = await useDatabase(t, 'postgres');
    const { rows } = await sql<Record<string, unknown>>`select
        '2026-02-20 08:00:00+00'::timestamptz as whole,
        '2026-02-20 08:00:00.123456+00'::timestamptz as fraction,
        '2026-02-20 10:30:05+03'::timestamptz as offset,
        '0999-12-31 23:59:59+00'::timestamptz as early,
        '2026-02-20'::date as day,
        9007199254740991::int8 as big`.execute(handle.db);
    assert.deepEqual(rows, [
      {
        whole: '2026-02-20T08:00:00Z',
        fraction: '2026-02-20T08:00:00Z',
        offset: '2026-02-20T07:30:05Z',
        early: '0999-12-31T23:59:59Z',
        day: '2026-02-20',
        big: 9007199254740991,
      },
    ]);
  });
});
