import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Migrator, sql } from 'kysely';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { postgresPlan } from '../helpers/plans.ts';
import { company, employee, leave, leaveType, writeNdjson } from '../helpers/records.ts';

const INDEX = 'leaves_employee_id_id';
const EMPLOYEES = 40;
const STATUSES = ['approved', 'pending', 'rejected', 'cancelled'] as const;

/**
 * The leaves of employees a search found, with a status and an `updated_since`, counted and
 * paged in start-date order as the service reads a searched list (`leaveListQueries`): from the
 * employee index, with every column they test.
 */
function searchedLeaves(handle: DatabaseHandle) {
  const matching = handle.db
    .selectFrom('leaves as l')
    .where('l.company_id', '=', 1)
    .where('l.employee_id', 'in', [3, 7, 11, 19])
    .where('l.status', 'in', ['approved', 'pending'])
    .where('l.updated_at', '>=', '2023-01-01T00:00:00.000Z');
  return [
    matching.select(sql<number>`count(*)`.as('total')).compile(),
    matching
      .select('l.id')
      .orderBy('l.start_date')
      .orderBy('l.id')
      .where('l.leave_type_id', 'in', [1, 2])
      .limit(25)
      .compile(),
  ];
}

/** PostgreSQL's plans of the searched list's count and page, once the planner walks an index. */
async function plans(handle: DatabaseHandle): Promise<string[]> {
  const off = ['enable_seqscan', 'enable_bitmapscan'];
  return Promise.all(searchedLeaves(handle).map((query) => postgresPlan(handle.db, query, off)));
}

describeEachDialect('the index of each employee’s leaves', (dialect) => {
  it('carries what a searched list tests on PostgreSQL from migration 0023, so its count and page read no row; SQLite’s stays plain', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const records: unknown[] = [company(1), leaveType(1, 1), leaveType(1, 2), leaveType(1, 3)];
    for (let id = 1; id <= EMPLOYEES; id += 1) records.push(employee(1, id));
    for (let id = 1; id <= 4000; id += 1) {
      const month = 1 + (id % 12);
      records.push(
        leave(1, id, 1 + (id % EMPLOYEES), 1 + (id % 3), {
          status: STATUSES[id % STATUSES.length],
          start_date: `202${id % 5}-${String(month).padStart(2, '0')}-10`,
          end_date: `202${id % 5}-${String(month).padStart(2, '0')}-12`,
          updated_at: `202${id % 5}-${String(month).padStart(2, '0')}-12T08:00:00.000Z`,
        }),
      );
    }
    await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));

    if (handle.dialect === 'sqlite') {
      const columns = handle.sqlite.prepare(`pragma index_info(${INDEX})`).all() as {
        name: string;
      }[];
      assert.deepEqual(
        columns.map((column) => column.name),
        ['company_id', 'employee_id', 'id'],
        'not widened on SQLite (its import speed is a target)',
      );
      return;
    }
    // The index-only scan needs the table's pages marked all-visible, as the import's vacuum
    // leaves them.
    await sql`vacuum analyze leaves`.execute(handle.db);
    for (const plan of await plans(handle)) {
      assert.match(plan, new RegExp(`Index Only Scan using ${INDEX}\\b`), plan);
    }

    const { error } = await new Migrator({ db: handle.db, provider: migrationProvider }).migrateTo(
      '0022_employee_search_columns',
    );
    assert.equal(error, undefined);
    // Before it, the rows are read (or another index walked, testing the employees).
    for (const plan of await plans(handle)) {
      assert.doesNotMatch(plan, new RegExp(`Index Only Scan using ${INDEX}\\b`), plan);
    }
    const { applied } = await migrateToLatest(handle.db);
    assert.equal(applied[0], '0023_covering_leave_employee_index');
    for (const plan of await plans(handle)) {
      assert.match(plan, new RegExp(`Index Only Scan using ${INDEX}\\b`), plan);
    }
  });
});
