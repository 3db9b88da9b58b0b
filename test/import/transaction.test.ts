import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Dialect } from '../../src/db/connect.ts';
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
import { company, employee } from '../helpers/records.ts';

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
    const dir = useTempDir(t);
    const session = new ImportSession(new FileReceiptStore(dir), dir);
    let line = 0;
    /** The rows of `records` as the importer hands them to the transaction. */
    const batchOf = async (records: unknown[]): Promise<Batch> => {
      for (const value of records) {
        line += 1;
        await session.add(handle.db, line, session.parse(line, value));
      }
      const taken: Batch[] = [];
      const written: WriteOutcome = { conflict: null, refused: null, replacedReceiptKeys: [] };
      const capture = {
        write: async (batch: Batch) => {
          taken.push(batch);
          return written;
        },
      } as unknown as ImportTransaction;
      await session.flush(capture);
      return taken[0] as Batch;
    };
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
