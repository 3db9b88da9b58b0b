import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { postgresPlan } from '../helpers/plans.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

/** Migration 0020's indexes, PostgreSQL only. */
const INDEXES = ['leaves_leave_type_start_date_list', 'expenses_category_expense_date_list'];
const GROUPS = 8;
const DAYS = 4 * 365;

/** A date `day` days after 2021-01-01. */
const date = (day: number) => new Date(Date.UTC(2021, 0, 1 + day)).toISOString().slice(0, 10);

describeEachDialect('date windows of some leave types or categories', (dialect) => {
  it('are read through the type or category first on PostgreSQL, and the date index on SQLite', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const records: unknown[] = [company(1), employee(1, 1)];
    for (let group = 1; group <= GROUPS; group += 1) {
      records.push(leaveType(1, group), category(1, group));
    }
    for (let id = 1; id <= 4000; id += 1) {
      const day = (id * 37) % DAYS;
      const group = 1 + (id % GROUPS);
      records.push(
        leave(1, id, 1, group, { start_date: date(day), end_date: date(day + 2) }),
        expense(1, id, 1, group, { expense_date: date(day) }),
      );
    }
    await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));
    // A year of one leave type and two statuses, and a quarter of two categories, as the
    // service gathers a window's ids.
    const leaves = handle.db
      .selectFrom('leaves as l')
      .select('l.id')
      .where('l.company_id', '=', 1)
      .where('l.end_date', '>=', '2022-01-01')
      .where('l.start_date', '<=', '2022-12-31')
      .where('l.leave_type_id', 'in', [3])
      .where('l.status', 'in', ['approved', 'pending'])
      .orderBy('l.id')
      .limit(50)
      .compile();
    const expenses = handle.db
      .selectFrom('expenses as x')
      .select(['x.id', 'x.amount_e4'])
      .where('x.company_id', '=', 1)
      .where('x.expense_date', '>=', '2023-04-01')
      .where('x.expense_date', '<=', '2023-06-30')
      .where('x.category_id', 'in', [2, 5])
      .orderBy('x.amount_e4', 'desc')
      .orderBy('x.id', 'desc')
      .limit(50)
      .compile();

    if (handle.dialect === 'sqlite') {
      const names = handle.sqlite
        .prepare(`select name from sqlite_master where type = 'index' and name in (?, ?)`)
        .pluck()
        .all(...INDEXES);
      assert.deepEqual(names, [], 'not built by the SQLite import (its speed target)');
      return;
    }
    await sql`vacuum analyze leaves, expenses`.execute(handle.db);
    // Which index a window is read through once the planner walks one.
    const off = ['enable_seqscan', 'enable_bitmapscan'];
    const leavesPlan = await postgresPlan(handle.db, leaves, off);
    const expensesPlan = await postgresPlan(handle.db, expenses, off);
    assert.match(
      leavesPlan,
      /Index Only Scan using leaves_leave_type_start_date_list\b/,
      leavesPlan,
    );
    assert.match(
      expensesPlan,
      /Index Only Scan using expenses_category_expense_date_list\b/,
      expensesPlan,
    );
  });
});
