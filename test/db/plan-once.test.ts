import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { type PostgresPoolClient, sql } from 'kysely';
import pg from 'pg';
import { companyDataVersion } from '../../src/db/companies.queries.ts';
import { type Dialect, openDatabase } from '../../src/db/connect.ts';
import { findEmployees } from '../../src/db/employees.queries.ts';
import { findExpense } from '../../src/db/expenses.queries.ts';
import { planningOncePool, preparedQuery } from '../../src/db/plan-once.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import {
  describeEachDialect,
  testDialects,
  useDatabase,
  useTempDir,
} from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  smallCompany,
  writeNdjson,
} from '../helpers/records.ts';

/**
 * Two small companies (ids 1… and 11…) in a fresh database, read through a handle of one
 * connection, so the statements it prepared can be listed on it.
 */
async function twoCompaniesOnOneConnection(t: TestContext, dialect: Dialect) {
  const { target, handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const store = new FileReceiptStore(join(dir, 'store'));
  await importFile(
    handle,
    store,
    writeNdjson(dir, [...smallCompany(1, 0), ...smallCompany(2, 10)]),
  );
  const one = openDatabase(target, { max: 1 });
  t.after(() => one.close());
  return one;
}

describeEachDialect('look-ups by primary key', (dialect) => {
  it('are planned once per connection and lists are not, with the same answers', async (t) => {
    const one = await twoCompaniesOnOneConnection(t, dialect);
    const urls = { receiptUrl: (id: number) => `https://api.test/expenses/${id}/receipt` };
    // PostgreSQL plans a prepared statement afresh 5 times before it keeps a generic plan.
    const versions = new Set<number>();
    for (let i = 0; i < 7; i++) {
      assert.equal((await findExpense(one.db, 1, 1, urls))?.items.length, 1);
      assert.equal(await findExpense(one.db, 2, 1, urls), null);
      versions.add(await companyDataVersion(one.db, 1));
    }
    assert.equal(versions.size, 1);
    assert.ok(([...versions][0] ?? 0) > 0);
    const leaves = await one.db
      .selectFrom('leaves')
      .select('id')
      .where('company_id', '=', 1)
      .execute();
    assert.deepEqual(leaves, [{ id: 1 }]);
    if (dialect !== 'postgres') return;

    const { rows } = await sql<{ statement: string; generic_plans: number }>`
      select statement, generic_plans from pg_prepared_statements order by statement`.execute(
      one.db,
    );
    // The expense's items are read in its own statement (a subquery), not in one of their own.
    assert.deepEqual(
      rows.map((row) => row.statement.match(/^select .*? from "(\w+)"/s)?.[1]),
      ['companies', 'expenses'],
    );
    for (const row of rows) {
      assert.match(row.statement, /\/\* plan once \*\/$/);
      assert.ok(row.generic_plans > 0, row.statement);
    }
  });
});

describeEachDialect('look-ups among ids', (dialect) => {
  it('are one statement planned once for any number of ids, and keep to the company', async (t) => {
    const one = await twoCompaniesOnOneConnection(t, dialect);
    const idsOf = (rows: { id: number }[]) => rows.map((row) => row.id);
    for (let i = 0; i < 7; i++) {
      // Id 11 is company 2's: asked for by company 1, it is not found.
      assert.deepEqual(idsOf(await findEmployees(one.db, 1, [1])), [1]);
      assert.deepEqual(idsOf(await findEmployees(one.db, 1, [1, 11])), [1]);
      assert.deepEqual(idsOf(await findEmployees(one.db, 2, [1, 11, 12, 13])), [11]);
    }
    if (dialect !== 'postgres') return;

    const { rows } = await sql<{ statement: string; generic_plans: number }>`
      select statement, generic_plans from pg_prepared_statements`.execute(one.db);
    assert.equal(rows.length, 1, 'one statement for 1, 2 and 4 ids');
    assert.match(rows[0]?.statement ?? '', /"id" = any\(\$2\)/);
    assert.ok((rows[0]?.generic_plans ?? 0) > 0);
  });
});

describeEachDialect('prepared queries', (dialect) => {
  it('read an expense and its items in one statement, in their order, with exact values', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const items = [
      { name: 'Third by name, first by position', quantity: 0.30000000000000004, price: '0.0001' },
      { name: 'Çay', quantity: 1_000_000, price: '99999999999.9999' },
      { name: 'A', quantity: 2.5, price: '12.50' },
    ];
    await importFile(
      handle,
      new FileReceiptStore(join(dir, 'store')),
      writeNdjson(dir, [
        company(1),
        employee(1, 1),
        category(1, 1),
        expense(1, 1, 1, 1, { items }),
        expense(1, 2, 1, 1, { items: [] }),
      ]),
    );
    const urls = { receiptUrl: (id: number) => `https://api.test/expenses/${id}/receipt` };
    const found = await findExpense(handle.db, 1, 1, urls);
    assert.deepEqual(found?.items, [
      { name: 'Third by name, first by position', quantity: 0.30000000000000004, price: 0.0001 },
      { name: 'Çay', quantity: 1_000_000, price: 99999999999.9999 },
      { name: 'A', quantity: 2.5, price: 12.5 },
    ]);
    assert.deepEqual((await findExpense(handle.db, 1, 2, urls))?.items, []);
  });

  it("bind each call's values to the text built once, constants included", async (t) => {
    const one = await twoCompaniesOnOneConnection(t, dialect);
    let builds = 0;
    const namesAmong = preparedQuery(
      (db, values: { companyId: number; ids: readonly number[] }) => {
        builds += 1;
        return db
          .selectFrom('employees')
          .select(['id', 'full_name'])
          .where('company_id', '=', values.companyId)
          .where('status', '!=', 'terminated')
          .where((eb) => eb.or([eb('id', 'in', [-1]), eb('id', '=', eb.val(values.ids[0]))]))
          .orderBy('id');
      },
    );
    await assert.rejects(
      namesAmong(one.db, { companyId: 1, ids: [1] }),
      /'ids' was read but is not a parameter/,
    );
    const employeesOf = preparedQuery((db, values: { companyId: number; below: number }) => {
      builds += 1;
      return db
        .selectFrom('employees')
        .select('id')
        .where('company_id', '=', values.companyId)
        .where('id', '<', values.below)
        .where('status', '!=', 'terminated')
        .orderBy('id');
    });
    builds = 0;
    assert.deepEqual(await employeesOf(one.db, { companyId: 1, below: 100 }), [{ id: 1 }]);
    assert.deepEqual(await employeesOf(one.db, { companyId: 2, below: 100 }), [{ id: 11 }]);
    assert.deepEqual(await employeesOf(one.db, { companyId: 2, below: 11 }), []);
    assert.equal(builds, 1, 'built once for the handle');
  });
});

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

it('the planning pool hands out one wrapper per pooled connection (postgres)', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  // Kysely keeps a connection's state under the object `connect` returns: a new object per
  // checkout would make it build that state again for every query.
  const pool = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2 });
  const planning = planningOncePool(pool);
  const held: PostgresPoolClient[] = [];
  const connect = async () => {
    const client = await planning.connect();
    held.push(client);
    return client;
  };
  const releaseAll = () => {
    for (const client of held.splice(0)) client.release();
  };
  t.after(async () => {
    releaseAll();
    await pool.end();
  });
  const [first, second] = [await connect(), await connect()];
  assert.notEqual(first, second);
  releaseAll();
  const again = [await connect(), await connect()];
  assert.ok(again.includes(first) && again.includes(second));
  for (const client of again) {
    const { rows } = await client.query('select 1 as one', []);
    assert.deepEqual(rows, [{ one: 1 }]);
  }
});
