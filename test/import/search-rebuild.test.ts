import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { FTS_DEFAULTS, rebuildSearchTable } from '../../src/import/deferred-indexes.ts';
import { useDatabase } from '../helpers/databases.ts';
import { segmentsOf, settingsOf } from '../helpers/fts.ts';

const WORDS = ['hotel', 'taksi', 'lübeck', 'ofis', 'yemek', 'kırtasiye', 'uçak', 'otopark'];

describe('the rebuild of a trigram search table (sqlite)', () => {
  it('writes its segments without merging them, then leaves one segment and FTS5’s own settings', async (t) => {
    const { handle } = await useDatabase(t, 'sqlite');
    const { db } = handle;
    await sql`create table docs (id integer primary key, a text not null, b text not null)`.execute(
      db,
    );
    await sql`create virtual table docs_search using fts5(a, b, content='docs',
      content_rowid='id', tokenize='trigram case_sensitive 1')`.execute(db);
    const rows = Array.from({ length: 6000 }, (_, i) => ({
      id: i + 1,
      a: `${WORDS[i % WORDS.length]} ${i} ${WORDS[(i * 7) % WORDS.length]}`,
      b: `merchant ${i % 97}`,
    }));
    for (let start = 0; start < rows.length; start += 500) {
      const values = rows
        .slice(start, start + 500)
        .map((row) => sql`(${row.id}, ${row.a}, ${row.b})`);
      await sql`insert into docs (id, a, b) values ${sql.join(values)}`.execute(db);
    }

    // 64 KiB of terms a segment: 18 segments before the last merge, more than FTS5's default
    // of 16 a level that would otherwise have merged them on the way.
    await db.transaction().execute((trx) => rebuildSearchTable(trx, 'docs_search', 64 * 1024));

    assert.equal(await segmentsOf(db, 'docs_search'), 1);
    assert.deepEqual(await settingsOf(db, 'docs_search'), { ...FTS_DEFAULTS });
    await sql`insert into docs_search(docs_search) values ('integrity-check')`.execute(db);
    for (const term of ['beck', 'merchant 42', 'kırt', '5999']) {
      const { rows: found } = await sql<{ rowid: number }>`
        select rowid from docs_search where docs_search match ${`"${term}"`} order by rowid`.execute(
        db,
      );
      const expected = rows
        .filter((row) => row.a.includes(term) || row.b.includes(term))
        .map((row) => row.id);
      assert.ok(expected.length > 0, term);
      assert.deepEqual(
        found.map((row) => row.rowid),
        expected,
        term,
      );
    }
  });
});
