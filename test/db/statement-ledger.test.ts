import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { companyDataVersion } from '../../src/db/companies.queries.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { listEmployees } from '../../src/db/employees.queries.ts';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import { listLeaves } from '../../src/db/leaves.queries.ts';
import { readCounted } from '../../src/db/statement-ledger.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { freshListSource } from '../helpers/list-source.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  SERVED_EMPLOYEE_KEYS,
  smallCompany,
  writeNdjson,
} from '../helpers/records.ts';

/** Company 1 with 12 of each record, company 2 with one; a list source of company 1. */
const ids = Array.from({ length: 12 }, (_, i) => i + 1);

async function twoCompanies(t: TestContext, dialect: Dialect) {
  const { handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const store = new FileReceiptStore(join(dir, 'store'));
  await importFile(
    handle,
    store,
    writeNdjson(dir, [
      company(1),
      leaveType(1, 1),
      category(1, 1),
      ...ids.flatMap((id) => [employee(1, id), leave(1, id, id, 1), expense(1, id, id, 1)]),
      ...smallCompany(2, 100),
    ]),
  );
  const version = await companyDataVersion(handle.db, 1);
  assert.ok(version > 0);
  // As a request reads it: once, at its start.
  const source = { ...freshListSource(handle.db, 1), version: async () => version };
  const more = (records: unknown[]) =>
    importFile(handle, store, writeNdjson(dir, records, 'more.ndjson'));
  return { db: handle.db, source, version, more };
}

const page = { page: 1, perPage: 5 };
const byId = { field: 'id', direction: 'asc' } as const;
const urls = { receiptUrl: (id: number) => `https://api.test/expenses/${id}/receipt` };

describeEachDialect('the version a page read beside its rows', (dialect) => {
  const postgres = dialect === 'postgres';

  it('tells the answer’s version where the rows were its last statement (PostgreSQL)', async (t) => {
    const { source, version } = await twoCompanies(t, dialect);
    const roster = await readCounted(() => listEmployees(source, 1, {}, byId, page));
    assert.equal(roster.result.data.length, 5);
    assert.equal(roster.versionRead, postgres ? version : undefined);
    // Least data: the version read beside the rows is not part of a record.
    for (const row of roster.result.data) {
      assert.deepEqual(Object.keys(row).sort(), SERVED_EMPLOYEE_KEYS);
    }
    // The company's employees are not held yet: the page looks them up by key after its rows,
    // a statement that does not read the version, so the answer has none.
    const first = await readCounted(() => listLeaves(source, 1, {}, byId, page));
    assert.equal(first.result.data.length, 5);
    assert.equal(first.versionRead, undefined);
    await source.employees.settled();
    const leaves = await readCounted(() => listLeaves(source, 1, {}, byId, page));
    assert.deepEqual(leaves.result, first.result);
    assert.equal(leaves.versionRead, postgres ? version : undefined);
    const expenses = await readCounted(() => listExpenses(source, 1, {}, byId, page, urls));
    assert.equal(expenses.result.data.length, 5);
    assert.equal(expenses.versionRead, postgres ? version : undefined);
    assert.ok(!('company_data_version' in (leaves.result.data[0] ?? {})));
    assert.ok(!('company_data_version' in (expenses.result.data[0] ?? {})));
  });

  it('tells none where a statement came after the rows or ran beside them', async (t) => {
    const { db, source, version } = await twoCompanies(t, dialect);
    const after = await readCounted(async () => {
      const answer = await listEmployees(source, 1, {}, byId, page);
      await companyDataVersion(db, 2);
      return answer;
    });
    assert.equal(after.versionRead, undefined);
    // A statement sent before the rows but still running while they were read may have read a
    // later state than theirs.
    const sleep = dialect === 'postgres' ? sql`select pg_sleep(0.2)` : sql`select 1`;
    const beside = await readCounted(async () => {
      const running = sleep.execute(db);
      const answer = await listEmployees(source, 1, {}, byId, { page: 2, perPage: 5 });
      await running;
      return answer;
    });
    assert.equal(beside.result.data.length, 5);
    assert.equal(beside.versionRead, undefined);
    // Outside `readCounted` nothing is counted, and the next answer starts afresh.
    await listEmployees(source, 1, {}, byId, page);
    const alone = await readCounted(() => listEmployees(source, 1, {}, byId, page));
    assert.equal(alone.versionRead, postgres ? version : undefined);
  });

  it('is the version the rows were read at: an import that committed first moved it', async (t) => {
    const { source, version, more } = await twoCompanies(t, dialect);
    await more([employee(1, 1, { last_name: 'Renamed' })]);
    const moved = await companyDataVersion(source.db, 1);
    assert.ok(moved > version);
    // The source reads at the version it began with (as a request whose version was kept), but
    // the rows' statement reads the company's version as the import left it.
    const answer = await readCounted(() => listEmployees(source, 1, {}, byId, page));
    assert.equal(answer.versionRead, postgres ? moved : undefined);
  });
});
