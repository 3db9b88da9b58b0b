import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import { listLeaves } from '../../src/db/leaves.queries.ts';
import { GATHER_LIMIT } from '../../src/db/pagination.ts';
import { SAMPLE_INTERVAL, SAMPLED_MIN_ROWS } from '../../src/db/sampled-lists.ts';
import { mulberry32 } from '../../src/demo/random.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { testDialects, useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import {
  category,
  company,
  employee,
  expense,
  leavesCreatedTheDayBefore,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

/**
 * A walk in another column's order than a window's starts at the first match it can meet: the
 * lowest sort value of the matches when ascending, the highest when descending. Only that end
 * is looked for: where a short walk from it meets a match, the matches are not gathered for
 * their bounds, even when they bunch up far from the other end (SQLite, whose statements the
 * test sees; the rows of both ways are checked on both databases in test/http/long-lists).
 */
it('a walk from the end where a window bunches up reads no bounds of the whole window (SQLite)', async (t) => {
  const { handle } = await useDatabase(t, 'sqlite');
  if (handle.dialect !== 'sqlite') throw new Error('a SQLite suite');
  const dir = useTempDir(t);
  // In created_at order, a window from day 150 on matches none of the first samples and
  // every one of the last.
  const count = SAMPLED_MIN_ROWS + 7_000;
  const leaves = leavesCreatedTheDayBefore(1, 1, 1, count, START, mulberry32(20261127));
  const records = [company(1), employee(1, 1), leaveType(1, 1), ...leaves];
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  const { source, statements } = loggedListSource(handle.sqlite);
  const from = new Date(START + 150 * DAY).toISOString().slice(0, 10);
  const matches = leaves
    .map((row) => ({
      id: row.id as number,
      created: row.created_at as string,
      end: row.end_date as string,
    }))
    .filter((row) => row.end >= from)
    .sort((a, b) => (a.created === b.created ? a.id - b.id : a.created < b.created ? -1 : 1));
  assert.ok(matches.length > GATHER_LIMIT, 'walked, not gathered');
  assert.ok(count - matches.length > 5 * SAMPLE_INTERVAL, 'the first samples match none');
  const page = { page: 2, perPage: 100 };
  const gatheredBounds = () => statements.filter((text) => text.includes('min(')).length;
  // With a leave type (every leave's), the window is walked: its samples count months by status
  // alone (see `windowRanks`).
  const typed = { from, leaveTypeIds: [1] };

  const latest = await listLeaves(
    source,
    1,
    typed,
    { field: 'created_at', direction: 'desc' },
    page,
  );
  assert.deepEqual(
    latest.data.map((row) => row.id),
    matches
      .slice(-200, -100)
      .reverse()
      .map((row) => row.id),
  );
  assert.equal(gatheredBounds(), 0, 'the last samples hold matches: no bounds gathered');

  const earliest = await listLeaves(
    source,
    1,
    typed,
    { field: 'created_at', direction: 'asc' },
    page,
  );
  assert.deepEqual(
    earliest.data.map((row) => row.id),
    matches.slice(100, 200).map((row) => row.id),
  );
  assert.equal(gatheredBounds(), 1, 'the first samples hold none: the bounds are gathered');

  // Without it, the page starts from the samples' month counts: no walk, no bounds.
  const counted = await listLeaves(
    source,
    1,
    { from },
    { field: 'created_at', direction: 'asc' },
    page,
  );
  assert.deepEqual(counted.data, earliest.data);
  assert.ok(statements.some((text) => text.includes('list_sample_months')));
  assert.equal(gatheredBounds(), 1);
});

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

/**
 * PostgreSQL plans a walk in id order that reads each row on the primary key (`id` alone):
 * started at the top of the whole table, it passed every row of the companies whose ids come
 * after the company's. The walk starts at the company's own highest (or lowest) id.
 */
it('a walk in id order starts at the company’s own ids on PostgreSQL', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  const { handle } = await useDatabase(t, 'postgres');
  if (handle.dialect !== 'postgres') throw new Error('a PostgreSQL suite');
  const dir = useTempDir(t);
  // Company 1's expenses first, then company 2's, whose ids are all higher.
  const records: unknown[] = [company(1), company(2)];
  for (const c of [1, 2]) records.push(employee(c, c * 100), category(c, c * 100));
  for (let id = 1; id <= 300; id++) {
    const c = id <= 200 ? 1 : 2;
    records.push(expense(c, id, c * 100, c * 100, { status: id % 2 ? 'paid' : 'pending' }));
  }
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  const { source, statements } = loggedListSource(handle.pool);
  const urls = { receiptUrl: () => '' };
  const page = await listExpenses(
    source,
    1,
    { status: ['paid'] },
    { field: 'id', direction: 'desc' },
    { page: 2, perPage: 10 },
    urls,
  );
  assert.deepEqual(
    page.data.map((row) => row.id),
    Array.from({ length: 10 }, (_, i) => 179 - 2 * i),
  );
  const walks = statements.filter(
    (text) => text.startsWith('select "x"."id" as "id"') && text.includes('order by "x"."id" desc'),
  );
  assert.ok(walks.length > 0, 'the page is walked');
  for (const text of walks) assert.match(text, /"x"\."id" < \$\d+/, 'from the company’s own top');
});
