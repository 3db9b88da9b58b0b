import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { describe, it, type TestContext } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { DatabaseHandle, Dialect } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import type { Batch, TableRows } from '../../src/import/rows.ts';
import { ImportSession } from '../../src/import/session.ts';
import {
  beginImport,
  beginImportOnThread,
  type ImportTransaction,
} from '../../src/import/transaction.ts';
import type { WriteOutcome } from '../../src/import/writer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { company, employee, leave, leaveType } from '../helpers/records.ts';

/**
 * A write that never settles fails its test instead of stalling the run (on PostgreSQL,
 * batches whose statements interleave stall).
 */
const UNTIL_STALLED = { timeout: 60_000 };

// The importer asks for a batch's write before the last one is written (BATCHES_IN_FLIGHT):
// both kinds of transaction must apply them one at a time, in order, and settle every one.
describeEachDialect('import transaction', (dialect) => transactionSuite(dialect, false));
describe('import transaction (sqlite, writer thread)', () => transactionSuite('sqlite', true));

function transactionSuite(dialect: Dialect, onThread: boolean): void {
  async function setup(t: TestContext) {
    const { handle } = await useDatabase(t, dialect);
    const options = { retentionDays: 30 };
    const begin = () =>
      onThread && handle.dialect === 'sqlite'
        ? beginImportOnThread(handle, options)
        : beginImport(handle, options);
    const batchOf = batchMaker(t, handle.db);
    const firstNames = () =>
      handle.db.selectFrom('employees').select(['id', 'first_name']).orderBy('id').execute();
    return { handle, begin, batchOf, firstNames };
  }

  it(
    'applies writes asked for together one at a time, in the order they were asked for',
    UNTIL_STALLED,
    async (t) => {
      const { begin, batchOf, firstNames } = await setup(t);
      const batches = [
        await batchOf([company(1), employee(1, 1, { first_name: 'First' }), employee(1, 2)]),
        await batchOf([employee(1, 1, { first_name: 'Second' }), employee(1, 3)]),
        await batchOf([employee(1, 1, { first_name: 'Third' })]),
      ];
      const transaction = await begin();
      const outcomes = await Promise.all(batches.map((batch) => transaction.write(batch)));
      for (const outcome of outcomes) assert.equal(outcome.conflict, null);
      await transaction.commit();
      assert.deepEqual(await firstNames(), [
        { id: 1, first_name: 'Third' },
        { id: 2, first_name: 'Ayşe' },
        { id: 3, first_name: 'Ayşe' },
      ]);
    },
  );

  it(
    'settles every write after one the database refuses, and a rollback leaves nothing',
    UNTIL_STALLED,
    async (t) => {
      const { begin, batchOf, firstNames } = await setup(t);
      const good = await batchOf([company(1), employee(1, 1), employee(1, 2)]);
      // first_name is not null: the rows pass every check of the session but not the database.
      const employees = good.employees as TableRows;
      const { columns, values } = employees;
      const at = columns.indexOf('first_name');
      const refused: Batch = {
        ...good,
        employees: {
          ...employees,
          values: values.map((value, i) => (i % columns.length === at ? null : value)),
        },
      };
      const later = await batchOf([employee(1, 3)]);
      const transaction = await begin();
      const writes = [transaction.write(refused), transaction.write(later)];
      try {
        await assert.rejects(writes[0] as Promise<WriteOutcome>, /NOT NULL|null value/i);
      } finally {
        // Whatever became of it, the write asked for after the refused one settles.
        await Promise.allSettled(writes);
        await transaction.rollback();
      }
      assert.deepEqual(await firstNames(), []);
    },
  );
}

// A first load on the writer thread, whose connection is the import's alone, leaves references
// to the importer's own checks (docs/performance.md, item 62); every other import keeps
// SQLite's foreign-key checks.
describe('import transaction (sqlite): foreign-key checks', () => {
  async function setup(t: TestContext) {
    const { handle, target } = await useDatabase(t, 'sqlite');
    const sqliteHandle = handle as DatabaseHandle & { dialect: 'sqlite' };
    const options = { retentionDays: 30 };
    const batchOf = batchMaker(t, handle.db);
    /** A leave of employee 99, whom nothing stores: the importer would have refused it. */
    const orphanLeave = async (id: number) => {
      const batch = await batchOf([leave(1, id, 1, 1)]);
      const leaves = batch.leaves as TableRows;
      const at = leaves.columns.indexOf('employee_id');
      return {
        ...batch,
        leaves: { ...leaves, values: leaves.values.map((v, i) => (i === at ? 99 : v)) },
      };
    };
    const parents = await batchOf([company(1), employee(1, 1), leaveType(1, 1)]);
    const foreignKeys = () => sqliteHandle.sqlite.pragma('foreign_keys', { simple: true });
    return {
      handle: sqliteHandle,
      path: (target as { path: string }).path,
      onThread: () => beginImportOnThread(sqliteHandle, options),
      here: () => beginImport(handle, options),
      parents,
      orphanLeave,
      foreignKeys,
    };
  }
  const REFUSED = /FOREIGN KEY constraint failed/;

  it('are off in a first load on the writer thread, and on in any other', async (t) => {
    const { onThread, here, parents, orphanLeave, foreignKeys } = await setup(t);
    const orphan = await orphanLeave(1);

    const threaded = await onThread();
    await threaded.write(parents);
    await threaded.write(orphan);
    await threaded.rollback();

    const inThisThread = await here();
    await inThisThread.write(parents);
    await assert.rejects(inThisThread.write(orphan), REFUSED);
    await inThisThread.rollback();
    assert.equal(foreignKeys(), 1);

    const first = await onThread();
    await first.write(parents);
    await first.write(await orphanLeave(2));
    await first.commit();
    // Not a first load any more: the writer thread keeps them.
    const later = await onThread();
    await assert.rejects(later.write(await orphanLeave(3)), REFUSED);
    await later.rollback();
  });

  it('are on when another import stores rows between the look and the write lock', async (t) => {
    const { handle, path, onThread, parents, orphanLeave } = await setup(t);
    const setup1 = await onThread();
    await setup1.write(parents);
    await setup1.commit();
    await handle.db.deleteFrom('employees').execute();
    // Another connection, on a thread of its own, holds the write lock with an employee in it
    // for 300 ms: the import, begun here on a connection of its own as the writer thread's
    // is, finds the listed tables empty, waits for the lock (busy timeout), then finds the
    // employee.
    const other = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const Database = require(workerData.module);
       const db = new Database(workerData.path);
       db.exec('begin immediate');
       db.exec("insert into employees (id, company_id, employee_number, first_name, last_name, full_name, email, department, position, status, hire_date, name_folded, number_folded) values (1, 1, 'E1', 'Ada', 'Byron', 'Ada Byron', 'ada@example.test', 'R&D', 'Engineer', 'active', '2020-01-01', 'ada byron', 'e1')");
       parentPort.postMessage('locked');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
       db.exec('commit');
       db.close();`,
      {
        eval: true,
        workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path },
      },
    );
    await once(other, 'message');
    const transaction = await beginImport(handle, { retentionDays: 30 }, true);
    await once(other, 'exit');
    await assert.rejects(transaction.write(await orphanLeave(1)), REFUSED);
    await transaction.rollback();
    assert.equal(handle.sqlite.pragma('foreign_keys', { simple: true }), 1);
  });
});

/** Makes the rows of records as the importer hands them to the transaction, file order kept. */
function batchMaker(t: TestContext, db: Db): (records: unknown[]) => Promise<Batch> {
  const dir = useTempDir(t);
  const session = new ImportSession(new FileReceiptStore(dir), dir);
  let line = 0;
  return async (records) => {
    for (const value of records) {
      line += 1;
      await session.add(db, line, session.parse(line, value));
    }
    let taken: Batch | undefined;
    const written: WriteOutcome = {
      conflict: null,
      refused: null,
      replacedReceiptKeys: [],
      absentDeletes: 0,
    };
    await session.flush({
      write: async (batch: Batch) => {
        taken = batch;
        return written;
      },
    } as unknown as ImportTransaction);
    return taken as Batch;
  };
}
