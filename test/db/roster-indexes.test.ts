import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type CompiledQuery, Migrator, sql } from 'kysely';
import type { DatabaseHandle, Dialect } from '../../src/db/connect.ts';
import { EMPLOYEE_SEARCH } from '../../src/db/employees.queries.ts';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { matchesSearch } from '../../src/db/search.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import {
  type Cleanup,
  describeEachDialect,
  useDatabase,
  useTempDir,
} from '../helpers/databases.ts';
import { postgresPlan } from '../helpers/plans.ts';
import { company, employee, writeNdjson } from '../helpers/records.ts';

const STATUSES = ['active', 'inactive', 'terminated'] as const;
/** Each roster order and the index its walk reads (migrations 0019 and 0022). */
const ORDERS = [
  ['id', 'employees_id_list'],
  ['name_folded', 'employees_name_folded_list'],
  ['number_folded', 'employees_number_folded_list'],
  ['hire_date', 'employees_hire_date_list'],
  ['updated_at', 'employees_updated_at_list'],
] as const;

/**
 * A database holding company 1's roster of 300, whose first names are `Name0`–`Name299`, and
 * another company's 2,000 employees with lower ids, which a walk of the primary key in id order
 * would pass, as it would pass other companies' employees in a real database: without them,
 * PostgreSQL's planner walks the primary key for a roster this small.
 */
async function roster(t: Cleanup, dialect: Dialect) {
  const { handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const records = [
    company(1),
    company(2),
    ...Array.from({ length: 2000 }, (_, i) => employee(2, i + 1)),
    ...Array.from({ length: 300 }, (_, i) =>
      employee(1, 2001 + i, {
        status: STATUSES[i % 3],
        first_name: `Name${(i * 7919) % 300}`,
        hire_date: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
      }),
    ),
  ];
  await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));
  if (handle.dialect === 'postgres') await sql`vacuum analyze employees`.execute(handle.db);
  return handle;
}

/** Fails unless `query` reads `index` and no row: SQLite's covering index, PostgreSQL's index-only scan. */
async function assertReadsIndexAlone(handle: DatabaseHandle, query: CompiledQuery, index: string) {
  if (handle.dialect === 'sqlite') {
    const plan = handle.sqlite.prepare(`explain query plan ${query.sql}`).all(...query.parameters);
    const details = (plan as { detail: string }[]).map((row) => row.detail).join('\n');
    assert.match(details, new RegExp(`USING COVERING INDEX ${index}\\b`), details);
  } else {
    // What matters here is that the walk of the index, once it is chosen, reads no row.
    const details = await postgresPlan(handle.db, query, [
      'enable_seqscan',
      'enable_bitmapscan',
      'enable_sort',
    ]);
    assert.match(details, new RegExp(`Index Only Scan using ${index}\\b`), details);
  }
}

/** A roster search of two letters, counted, its employees found, a page of it in id order. */
async function assertShortSearchReadsIndexAlone(handle: DatabaseHandle) {
  const searched = () =>
    handle.db
      .selectFrom('employees')
      .where('company_id', '=', 1)
      .where(matchesSearch(handle.db, EMPLOYEE_SEARCH, 'e5'));
  const count = searched().select(sql<number>`count(*)`.as('total'));
  // The employees a leave search finds, and the roster's page of them in id order.
  const found = searched().select('id').limit(1000);
  const page = searched().select('id').orderBy('id').limit(25).offset(25);
  for (const query of [count, found, page]) {
    await assertReadsIndexAlone(handle, query.compile(), 'employees_id_list');
  }
  // `Name5` and `Name50`–`Name59` (7919 is prime to 300, so each first name is given once).
  assert.equal(Number((await count.executeTakeFirstOrThrow()).total), 11);
}

describeEachDialect('roster pages', (dialect) => {
  it('walk to a status-filtered page in any order through the index alone', async (t) => {
    const handle = await roster(t, dialect);
    for (const [column, index] of ORDERS) {
      const query = handle.db
        .selectFrom('employees')
        .select('id')
        .where('company_id', '=', 1)
        .where('status', 'in', ['active', 'terminated'])
        .orderBy(column)
        .orderBy('id')
        .limit(25)
        .offset(100)
        .compile();
      await assertReadsIndexAlone(handle, query, index);
    }
  });

  it('count and find the employees of a search too short for trigrams through the index alone', async (t) => {
    const handle = await roster(t, dialect);
    await assertShortSearchReadsIndexAlone(handle);
  });

  it('get the index that carries the texts from migration 0022, with its statistics on SQLite', async (t) => {
    const handle = await roster(t, dialect);
    const { db } = handle;
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(
      '0021_expense_text_date_indexes',
    );
    assert.equal(error, undefined);
    await assert.rejects(assertShortSearchReadsIndexAlone(handle));

    assert.equal((await migrateToLatest(db)).applied[0], '0022_employee_search_columns');
    await assertShortSearchReadsIndexAlone(handle);
    if (handle.dialect === 'sqlite') {
      // The import gathered the statistics; the migration's new index has its own again.
      const stat = handle.sqlite
        .prepare("select stat from sqlite_stat1 where idx = 'employees_id_list'")
        .get() as { stat: string } | undefined;
      assert.match(stat?.stat ?? '', /^2300 /);
    }
  });
});
