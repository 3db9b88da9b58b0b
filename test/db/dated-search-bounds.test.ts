import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import { GATHER_LIMIT } from '../../src/db/pagination.ts';
import { SAMPLE_INTERVAL } from '../../src/db/sampled-lists.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import { category, company, employee, expense, writeNdjson } from '../helpers/records.ts';

/**
 * Where a search within date bounds is read by its texts and walked in another column's order,
 * the walk's bounds come from the rows of every filter but the search, through the bounds' own
 * index, when those are no more than the texts' rows; else from the matches, through the texts'
 * indexes (`boundsOfRows`, src/db/sort-bounds.ts), without reading the rows where the samples of
 * the bounds' column already say there are more (`fewEnoughInBounds`, src/db/pagination.ts). SQLite, whose statements the test sees; the
 * pages of every way are checked against testing every row on both databases in
 * test/http/dated-searches.
 */
const START = Date.UTC(2014, 0, 1);
const COUNT = 44_000;
const dayOf = (i: number) => new Date(START + Math.floor(i / 10) * 86_400_000).toISOString();
/** "cab": 19 in 20 of the rows before the last 6,000, none after. */
const isCab = (i: number) => i < COUNT - 6_000 && i % 20 !== 0;

const expenses = Array.from({ length: COUNT }, (_, i) =>
  expense(1, i + 1, 1, 1, {
    title: `Trip ${i % 20}`,
    merchant_name: isCab(i) ? 'Yellow Cab' : 'Migros',
    expense_date: dayOf(i).slice(0, 10),
    // Later rows were updated later: the last samples in updated_at order match neither search.
    created_at: new Date(START + i * 8_640_000).toISOString().replace('.000', ''),
    updated_at: new Date(START + i * 8_640_000 + 60_000).toISOString().replace('.000', ''),
    items: [],
  }),
);

it('a walk’s bounds come from the bounds’ rows when they are no more than the texts’ (SQLite)', async (t) => {
  const { handle } = await useDatabase(t, 'sqlite');
  if (handle.dialect !== 'sqlite') throw new Error('a SQLite suite');
  const dir = useTempDir(t);
  const records = [company(1), employee(1, 1), category(1, 1), ...expenses];
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  const { source, statements } = loggedListSource(handle.sqlite);
  assert.ok(6_000 > 5 * SAMPLE_INTERVAL, 'the probe of the last samples finds no match');
  const bounds = () => statements.filter((text) => text.includes('min('));
  const page = { page: 2, perPage: 100 };
  const sort = { field: 'updated_at', direction: 'desc' } as const;

  // "trip" is every row's: the window's 30,000 rows are fewer than its texts' 44,000.
  const to = dayOf(29_999).slice(0, 10);
  const broad = await listExpenses(source, 1, { search: 'trip', to }, sort, page, urls);
  assert.equal(broad.meta.total, 30_000);
  assert.ok(broad.meta.total > GATHER_LIMIT, 'walked, not gathered');
  assert.deepEqual(
    broad.data.map((row) => row.id),
    Array.from({ length: 100 }, (_, k) => 30_000 - 100 - k),
  );
  assert.equal(bounds().length, 1, bounds().join('\n'));
  assert.match(bounds()[0] as string, /indexed by "expenses_expense_date_list"/);
  assert.doesNotMatch(bounds()[0] as string, /_folded/);

  // "cab" within most dates: more rows in the bounds than carry its texts, though the samples
  // of expense_date left room for as many; the matches' rows bound it.
  const cabs = (last: number) =>
    expenses.filter((_, i) => isCab(i) && i <= last).map((row) => row.id);
  const upTo = dayOf(36_999).slice(0, 10);
  const narrow = await listExpenses(source, 1, { search: 'cab', to: upTo }, sort, page, urls);
  assert.ok(cabs(36_999).length > GATHER_LIMIT);
  assert.equal(narrow.meta.total, cabs(36_999).length);
  assert.deepEqual(
    narrow.data.map((row) => row.id),
    cabs(36_999).reverse().slice(100, 200),
  );
  assert.equal(bounds().length, 3, bounds().join('\n'));
  const [rows, texts] = bounds().slice(1);
  assert.match(
    rows as string,
    /indexed by "expenses_expense_date_list"[\s\S]*limit \?\) as "bounded"/,
  );
  assert.match(texts as string, /indexed by "expenses_merchant_folded_list"/);

  // Within every date: the samples alone say the bounds hold too many rows to read.
  const all = await listExpenses(
    source,
    1,
    { search: 'cab', from: dayOf(0).slice(0, 10) },
    sort,
    page,
    urls,
  );
  assert.equal(all.meta.total, cabs(COUNT).length);
  assert.deepEqual(
    all.data.map((row) => row.id),
    cabs(COUNT).reverse().slice(100, 200),
  );
  assert.equal(bounds().length, 4, bounds().join('\n'));
  assert.match(bounds()[3] as string, /indexed by "expenses_merchant_folded_list"/);
});

const urls = { receiptUrl: () => '' };
