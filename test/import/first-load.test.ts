import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { describe, it, type TestContext } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import { importRecords } from '../../src/import/importer.ts';
import type { SourceRecord } from '../../src/import/ndjson.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { company, employee, leave, leaveType, smallCompany } from '../helpers/records.ts';

// A first load into SQLite runs without SQLite's foreign-key checks (the importer has checked
// every reference); every other import keeps them, and the connection gets them back after.
describe('a first load into SQLite', () => {
  async function setup(t: TestContext) {
    const { handle, target } = await useDatabase(t, 'sqlite');
    const sqliteHandle = handle as DatabaseHandle & { dialect: 'sqlite' };
    const dir = useTempDir(t);
    const store = new FileReceiptStore(dir);
    const foreignKeys = () => sqliteHandle.sqlite.pragma('foreign_keys', { simple: true });
    /** Imports on the handle's own connection, noting its setting as the records stream. */
    const run = async (records: unknown[]) => {
      const seen: unknown[] = [];
      async function* source(): AsyncGenerator<SourceRecord[]> {
        seen.push(foreignKeys());
        yield records.map((value, i) => ({ line: i + 1, value }));
      }
      await importRecords(handle, store, source(), dir);
      return seen;
    };
    return { handle: sqliteHandle, path: (target as { path: string }).path, run, foreignKeys };
  }

  it('runs without foreign-key checks, then sets them back; later imports keep them', async (t) => {
    const { handle, run, foreignKeys } = await setup(t);
    assert.equal(foreignKeys(), 1);
    assert.deepEqual(await run([...smallCompany(1, 0), employee(1, 2)]), [0]);
    assert.equal(foreignKeys(), 1);
    assert.deepEqual(handle.sqlite.pragma('foreign_key_check'), []);

    assert.deepEqual(await run([employee(1, 3), leave(1, 3, 3, 1)]), [1]);
    assert.equal(foreignKeys(), 1);
  });

  it('sets them back when it fails', async (t) => {
    const { handle, run, foreignKeys } = await setup(t);
    await assert.rejects(run([...smallCompany(1, 0), leave(1, 2, 99, 1)]), /employee_id/);
    assert.equal(foreignKeys(), 1);
    assert.deepEqual(await handle.db.selectFrom('companies').select('id').execute(), []);
  });

  it('keeps them when another import stores rows between its look and its write lock', async (t) => {
    const { handle, path, run, foreignKeys } = await setup(t);
    await run([company(1), leaveType(1, 1)]);
    // Another connection holds the write lock with an employee in it: the import finds the
    // listed tables empty, waits for the lock (busy_timeout), then finds the employee.
    const other = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const Database = require(workerData.module);
       const db = new Database(workerData.path);
       db.exec('begin immediate');
       db.exec("insert into employees (id, company_id, employee_number, first_name, last_name, full_name, email, department, position, status, hire_date, name_folded, number_folded) values (7, 1, 'E7', 'Ada', 'Byron', 'Ada Byron', 'ada@example.com', 'R&D', 'Engineer', 'active', '2020-01-01', 'ada byron', 'e7')");
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
    const seen = await run([employee(1, 2), leave(1, 2, 7, 1)]);
    await once(other, 'exit');
    assert.deepEqual(seen, [1]);
    assert.equal(foreignKeys(), 1);
    assert.deepEqual(await handle.db.selectFrom('leaves').select(['id', 'employee_id']).execute(), [
      { id: 2, employee_id: 7 },
    ]);
  });
});
