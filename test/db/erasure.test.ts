import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { purgeCompany } from '../../src/companies/purge.ts';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import { truncateWriteAheadLogOnThread } from '../../src/db/erasure.ts';
import { type ImportOptions, importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { segmentsOf } from '../helpers/fts.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

/** In every value of the records to erase, and nowhere else. */
const MARK = 'x7731q';

/** A company's records, employee 2 and what names it carrying MARK in each of its texts. */
function companyRecords(companyId: number, base: number) {
  const others = Array.from({ length: 300 }, (_, i) => employee(companyId, base + 10 + i));
  return [
    company(companyId),
    ...others,
    employee(companyId, base + 2, {
      first_name: `Zeynep${MARK}`,
      last_name: `Kaya${MARK}`,
      email: `${MARK}@example.test`,
      employee_number: `E-${MARK}`,
      national_id: `NID-${MARK}`,
      iban: `IBAN-${MARK}`,
      address: `Street ${MARK}`,
    }),
    leaveType(companyId, base + 1),
    leave(companyId, base + 5, base + 2, base + 1, {
      reason: `reason ${MARK}`,
      document: {
        deadline: null,
        obligation_status: null,
        attachments: [{ file_name: `medical-${MARK}.pdf` }],
      },
    }),
    category(companyId, base + 1),
    expense(companyId, base + 8, base + 10, base + 1),
    expense(companyId, base + 9, base + 2, base + 1, {
      title: `Kardiologie ${MARK}`,
      merchant_name: `Praxis ${MARK}`,
      description: `description ${MARK}`,
      items: [{ name: `item ${MARK}`, quantity: 1, price: '10.00' }],
    }),
  ];
}

/** Whether MARK is anywhere in the database file or its write-ahead log, in any case. */
function markOnDisk(path: string): string[] {
  return [path, `${path}-wal`].filter(
    (file) =>
      existsSync(file) && readFileSync(file).toString('latin1').toLowerCase().includes(MARK),
  );
}

// An employee's right to erasure (docs/production.md "Erasure: deleted values on disk"): once
// deleted, their values are gone from the SQLite files, not only from the API. The test's
// connection stays open, as a running service's do, so the write-ahead log stays too.
describe('erasure from the SQLite files', () => {
  const ways: Array<[how: string, options: ImportOptions]> = [
    ['', {}],
    [' (writer thread)', { writerThread: true }],
    [" (the admin API's threads)", { writerThread: true, afterCommitOnThreads: true }],
  ];
  for (const [how, options] of ways) {
    it(`an import that deletes an employee and their records leaves none of their values${how}`, async (t) => {
      const { handle, path, run } = await setup(t, options);
      await run([...companyRecords(1, 0)]);
      // Later changes made row by row, as the search tables' triggers record them.
      await run([employee(1, 3, { first_name: 'Deniz' })]);
      assert.notDeepEqual(markOnDisk(path), []);

      await run([
        { type: 'delete', resource: 'leave', company_id: 1, id: 5 },
        { type: 'delete', resource: 'expense', company_id: 1, id: 9 },
        { type: 'delete', resource: 'employee', company_id: 1, id: 2 },
      ]);
      assert.deepEqual(markOnDisk(path), []);
      await assertSearchTablesMerged(handle);
    });
  }

  it('says when a read held the write-ahead log past the busy timeout, and the next deleting import empties it', async (t) => {
    const { handle, path, run } = await setup(t, {});
    await run([...companyRecords(1, 0)]);
    // A read begun before the deletion and still open after the busy timeout, as a long export
    // through a connection of its own would be. A short timeout, so the test need not wait 5 s.
    const reader = openRead(t, handle, path, 100);

    const held = await run([
      { type: 'delete', resource: 'leave', company_id: 1, id: 5 },
      { type: 'delete', resource: 'expense', company_id: 1, id: 9 },
      { type: 'delete', resource: 'employee', company_id: 1, id: 2 },
    ]);
    assert.equal(held.deleted_values_in_wal, true);
    assert.notDeepEqual(markOnDisk(path), []);

    reader.exec('commit');
    const next = await run([{ type: 'delete', resource: 'employee', company_id: 1, id: 11 }]);
    assert.equal(next.deleted_values_in_wal, false);
    assert.deepEqual(markOnDisk(path), []);
  });

  it('empties the log on a thread, the event loop free while it waits for a reader', async (t) => {
    const { handle, path, run } = await setup(t, {});
    await run([...companyRecords(1, 0)]);
    await run([employee(1, 3, { first_name: 'Deniz' })]);
    // A read of the log's newest pages, ended by a timer: a wait on this thread (the busy
    // timeout, 2 s here) would keep the timer from running and give up with the log kept.
    const reader = openRead(t, handle, path, 2000);
    const order: string[] = [];
    setTimeout(() => {
      reader.exec('commit');
      order.push('the reader ended');
    }, 100);
    assert.equal(await truncateWriteAheadLogOnThread(handle), true);
    order.push('the log emptied');
    assert.deepEqual(order, ['the reader ended', 'the log emptied']);
    assert.equal(statSync(`${path}-wal`).size, 0);
  });

  it('a company purge leaves none of its values, and the other companies as they were', async (t) => {
    const { handle, path, dir, run } = await setup(t, {});
    await run([...companyRecords(1, 0).filter((r) => !JSON.stringify(r).includes(MARK))]);
    await run(companyRecords(2, 1000));
    assert.notDeepEqual(markOnDisk(path), []);

    const summary = await purgeCompany(handle, new FileReceiptStore(dir), 2);
    assert.equal(summary?.removed.employees, 301);
    assert.deepEqual(markOnDisk(path), []);
    await assertSearchTablesMerged(handle);
    const left = await handle.db
      .selectFrom('employees')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 300);
  });
});

/**
 * A read begun on a connection of its own and left open (it keeps using the write-ahead log's
 * pages until it commits), with `handle`'s busy timeout, the longest a checkpoint waits for it,
 * set to `busyTimeoutMs`.
 */
function openRead(t: TestContext, handle: DatabaseHandle, path: string, busyTimeoutMs: number) {
  const reader = new Database(path, { readonly: true });
  t.after(() => reader.close());
  reader.exec('begin');
  reader.prepare('select count(*) from employees').get();
  assert.equal(handle.dialect, 'sqlite');
  handle.sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return reader;
}

async function setup(t: TestContext, options: ImportOptions) {
  const { handle, target } = await useDatabase(t, 'sqlite');
  const dir = useTempDir(t);
  const store = new FileReceiptStore(dir);
  let files = 0;
  const run = (records: unknown[]) =>
    importFile(handle, store, writeNdjson(dir, records, `${++files}.ndjson`), options);
  return { handle, path: (target as { path: string }).path, dir, run };
}

/** FTS5 keeps a deleted row's terms in older segments until they are merged into one. */
async function assertSearchTablesMerged(handle: DatabaseHandle): Promise<void> {
  for (const fts of ['employees_search', 'expenses_search']) {
    assert.equal(await segmentsOf(handle.db, fts), 1, fts);
  }
}
