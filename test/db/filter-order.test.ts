import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import { listLeaves } from '../../src/db/leaves.queries.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

/**
 * SQLite tests a statement's WHERE terms on each index entry in the order they are written, so
 * the list filters write the ranges (a date window, `updated_since`) before the statuses: most
 * entries a walk in id order passes fail a range, and then their status is never compared (a
 * year of leaves with three statuses, walked 1,000 matches at a time: 1.7 → 1.2 ms a step).
 */

/**
 * Company 1's leaves and expenses, four a month in 2025 (two approved or paid, one pending, one
 * rejected), and a list source that logs its statements.
 */
async function listed(t: TestContext) {
  const { handle } = await useDatabase(t, 'sqlite');
  if (handle.dialect !== 'sqlite') throw new Error('a SQLite suite');
  const dir = useTempDir(t);
  const records: unknown[] = [company(1), employee(1, 1), leaveType(1, 1), category(1, 1)];
  let id = 0;
  for (let month = 1; month <= 12; month++) {
    const day = `2025-${String(month).padStart(2, '0')}-10`;
    for (const status of ['approved', 'pending', 'approved', 'rejected']) {
      id++;
      records.push(
        leave(1, id, 1, 1, {
          status,
          start_date: day,
          end_date: day,
          updated_at: `${day}T08:00:00Z`,
        }),
        expense(1, id, 1, 1, {
          status: status === 'approved' ? 'paid' : status,
          expense_date: day,
          updated_at: `${day}T08:00:00Z`,
        }),
      );
    }
  }
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  return loggedListSource(handle.sqlite);
}

/** Every statement that tests both a range and the status tests the range first. */
function assertRangesFirst(statements: string[], range: RegExp, status: string): void {
  const both = statements.filter((text) => range.test(text) && text.includes(status));
  assert.ok(both.length >= 2, 'the counts and pages test both');
  for (const text of both) assert.ok(text.search(range) < text.indexOf(status), text);
}

it('leave lists test a date window and updated_since before the statuses (SQLite)', async (t) => {
  const { source, statements } = await listed(t);
  const page = { page: 1, perPage: 25 };
  const sort = { field: 'id' as const, direction: 'asc' as const };
  const windowed = await listLeaves(
    source,
    1,
    { status: ['approved', 'rejected'], from: '2025-03-01', to: '2025-05-31' },
    sort,
    page,
  );
  assert.deepEqual(
    windowed.data.map((row) => row.id),
    [9, 11, 12, 13, 15, 16, 17, 19, 20],
  );
  const updated = await listLeaves(
    source,
    1,
    { status: ['pending'], updatedSince: '2025-11-01T00:00:00Z' },
    sort,
    page,
  );
  assert.deepEqual(
    updated.data.map((row) => row.id),
    [42, 46],
  );

  assertRangesFirst(statements, /"l"\."(end_date|start_date|updated_at)" [<>]=/, '"l"."status" in');
});

it('expense lists test a date window and updated_since before the statuses (SQLite)', async (t) => {
  const { source, statements } = await listed(t);
  const page = { page: 1, perPage: 25 };
  const sort = { field: 'id' as const, direction: 'desc' as const };
  const urls = { receiptUrl: () => '' };
  const windowed = await listExpenses(
    source,
    1,
    { status: ['pending'], from: '2025-02-01', to: '2025-03-31', categoryIds: [1] },
    sort,
    page,
    urls,
  );
  assert.deepEqual(
    windowed.data.map((row) => row.id),
    [10, 6],
  );
  const updated = await listExpenses(
    source,
    1,
    { status: ['paid', 'rejected'], updatedSince: '2025-12-01T00:00:00Z' },
    sort,
    page,
    urls,
  );
  assert.deepEqual(
    updated.data.map((row) => row.id),
    [48, 47, 45],
  );

  assertRangesFirst(statements, /"x"\."(expense_date|updated_at)" [<>]=/, '"x"."status" in');
});
