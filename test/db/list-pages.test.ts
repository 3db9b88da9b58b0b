import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { countedPage } from '../../src/db/gathered-pages.ts';
import { ANCHOR_INTERVAL } from '../../src/db/list-anchors.ts';
import type { ListOrder } from '../../src/db/list-source.ts';
import { walkedPage } from '../../src/db/walked-pages.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { freshListSource } from '../helpers/list-source.ts';
import { company, employee, leave, leaveType, writeNdjson } from '../helpers/records.ts';

// Long enough that the pages below lie in the first half of the matches (walked from the start).
const COUNT = 9 * ANCHOR_INTERVAL + 500;

describeEachDialect('a walked page', (dialect) => {
  /** COUNT leaves of company 1, ids 1…COUNT, and a list source over them. */
  async function leaves(t: TestContext, status: (id: number) => 'pending' | 'approved') {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const records: unknown[] = [company(1), employee(1, 1), leaveType(1, 1)];
    for (let id = 1; id <= COUNT; id++) records.push(leave(1, id, 1, 1, { status: status(id) }));
    await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
    return { handle, source: freshListSource(handle.db) };
  }

  it('is gathered instead when the walk would pass more index entries, not once its anchors are made', async (t) => {
    const { handle, source } = await leaves(t, (id) => (id % 3 === 0 ? 'pending' : 'approved'));
    const matching = handle.db
      .selectFrom('leaves as l')
      .select('l.id')
      .where('l.company_id', '=', 1)
      .where('l.status', '=', 'approved');
    const approved = Array.from({ length: COUNT }, (_, i) => i + 1).filter((id) => id % 3 !== 0);
    const order: ListOrder = { column: 'l.id', id: 'l.id', direction: 'asc' };
    const noBounds = async () => null;
    const gathered = [-1];
    // Gathering costs 7 index entries a match; a walk passes `walkCost` a match.
    const gathering = (walkCost: number) => ({
      walkCost,
      gatherCost: 7,
      page: async () => gathered,
    });
    const read = (page: number, walkCost: number) =>
      walkedPage(
        source,
        1,
        matching,
        order,
        { page, perPage: 100 },
        approved.length,
        noBounds,
        gathering(walkCost),
      );
    const expected = (page: number) => approved.slice((page - 1) * 100, page * 100);

    // Page 15 lies 1,400 matches in, past one anchor not made yet.
    assert.deepEqual(await read(15, 1_000), gathered, 'a walk of 1.4 million entries: gathered');
    assert.deepEqual(await read(15, 1), expected(15), 'a walk of 1,400 entries: walked');
    // That walk made the first anchor: page 11 starts at it, and is walked however sparse.
    assert.deepEqual(await read(11, 1_000), expected(11));
    // Page 13 is 200 matches past it: a walk of 200,000 entries is still gathered.
    assert.deepEqual(await read(13, 1_000), gathered);
  });

  it('that tests each row stops after a few samples and is gathered instead', async (t) => {
    // The last 300 leaves are pending: far along the id order from its start.
    const { handle, source } = await leaves(t, (id) => (id > COUNT - 300 ? 'pending' : 'approved'));
    // Samples of the id order every 100 rows: a walk goes at most 10 of them (1,000 rows).
    const values = Array.from({ length: Math.floor(COUNT / 100) }, (_, i) => (i + 1) * 100);
    const tested = {
      column: { values, ids: values, counts: new Int32Array(0) },
      samples: 10,
    };
    const gathered = [-1];
    const read = (status: 'pending' | 'approved', direction: 'asc' | 'desc', total: number) =>
      walkedPage(
        source,
        1,
        handle.db
          .selectFrom('leaves as l')
          .select('l.id')
          .where('l.company_id', '=', 1)
          .where('l.status', '=', status),
        { column: 'l.id', id: 'l.id', direction },
        { page: 1, perPage: 100 },
        total,
        async () => null,
        { walkCost: 1, gatherCost: 7, tested, page: async () => gathered },
      );
    const ids = (from: number, to: number, step: 1 | -1) =>
      Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => from + i * step);

    assert.deepEqual(await read('pending', 'asc', 300), gathered, 'none in the first 1,000 rows');
    assert.deepEqual(
      await read('pending', 'desc', 300),
      ids(COUNT, COUNT - 99, -1),
      'all in the last',
    );
    assert.deepEqual(await read('approved', 'asc', COUNT - 300), ids(1, 100, 1));
  });
});

describeEachDialect('a counted page', (dialect) => {
  it('is the page of the whole list sorted, with the number of matches, in either order and through either read', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    // 3 employees' leaves, interleaved; start dates repeat, so ties are broken by id.
    const records: unknown[] = [company(1), employee(1, 1), employee(1, 2), employee(1, 3)];
    records.push(leaveType(1, 1));
    const rows: { id: number; employee: number; start: string }[] = [];
    for (let id = 1; id <= 300; id++) {
      const start = `2026-01-${String(1 + (id % 17)).padStart(2, '0')}`;
      rows.push({ id, employee: 1 + (id % 3), start });
      records.push(leave(1, id, 1 + (id % 3), 1, { start_date: start, end_date: start, days: 1 }));
    }
    await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
    const matching = handle.db
      .selectFrom('leaves as l')
      .select('l.id')
      .where('l.company_id', '=', 1)
      .where('l.employee_id', 'in', [1, 3]);
    const kept = rows.filter((row) => row.employee !== 2);
    for (const column of ['l.id', 'l.start_date'] as const) {
      for (const direction of ['asc', 'desc'] as const) {
        const sign = direction === 'asc' ? 1 : -1;
        const expected = kept
          .toSorted((a, b) =>
            column === 'l.id' || a.start === b.start
              ? sign * (a.id - b.id)
              : sign * a.start.localeCompare(b.start),
          )
          .map((row) => row.id);
        const order: ListOrder = { column, id: 'l.id', direction };
        for (const hinted of [true, false]) {
          for (const [page, perPage] of [
            [1, 25],
            [3, 25],
            [2, 150],
            [8, 27],
          ] as const) {
            const what = `${column} ${direction}, page ${page} of ${perPage}, hinted ${hinted}`;
            const counted = await countedPage(
              handle.db,
              matching,
              order,
              { page, perPage },
              hinted,
            );
            const offset = (page - 1) * perPage;
            assert.deepEqual(
              counted,
              { ids: expected.slice(offset, offset + perPage), total: kept.length },
              what,
            );
          }
          const past = { page: 9, perPage: 25 };
          assert.equal(await countedPage(handle.db, matching, order, past, hinted), null);
        }
      }
    }
    const none = matching.where('l.status', '=', 'pending');
    const order: ListOrder = { column: 'l.id', id: 'l.id', direction: 'asc' };
    assert.equal(await countedPage(handle.db, none, order, { page: 1, perPage: 25 }, false), null);
  });
});
