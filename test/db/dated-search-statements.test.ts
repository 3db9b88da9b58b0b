import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import type { ExpenseFilters } from '../../src/db/expense-lists.ts';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import type { ListSource } from '../../src/db/list-source.ts';
import { SAMPLED_MIN_ROWS } from '../../src/db/sampled-lists.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import { category, company, employee, expense, writeNdjson } from '../helpers/records.ts';

/**
 * What an expense search within date bounds asks SQLite (whose statements the test sees; the
 * pages of every way are checked against testing every row on both databases in
 * test/http/dated-searches): a walk from a filter's bound on the sort column starts at the
 * first or last row of the other filters, not at the search's first match sought through the
 * search; and rows in bounds few enough to be gathered are read once for the page and its total.
 */
const DAY = 86_400_000;
const dayOf = (days: number) => new Date(Date.UTC(2025, 0, 1) + days * DAY).toISOString();
const MERCHANTS = ['Yellow Cab', 'IKEA', 'Migros', 'Deutsche Bahn'];

const expenses = Array.from({ length: 400 }, (_, i) =>
  expense(1, i + 1, 1, 1, {
    title: `Trip ${i % 20}`,
    merchant_name: MERCHANTS[i % MERCHANTS.length],
    expense_date: dayOf(i).slice(0, 10),
    created_at: dayOf(i),
    updated_at: dayOf((i * 7) % 400),
    amount: `${(i * 53) % 300}.50`,
  }),
);

async function loggedSource(t: Parameters<typeof useDatabase>[0]) {
  const { handle } = await useDatabase(t, 'sqlite');
  if (handle.dialect !== 'sqlite') throw new Error('a SQLite suite');
  const dir = useTempDir(t);
  const records = [company(1), employee(1, 1), category(1, 1), ...expenses];
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  return { ...loggedListSource(handle.sqlite), sqlite: handle.sqlite };
}

const urls = { receiptUrl: () => '' };
type Row = (typeof expenses)[number];
/** Expenses in order of a date column, then of id. */
const byColumn = (column: 'updated_at' | 'expense_date') => (a: Row, b: Row) =>
  a[column] < b[column] ? -1 : a[column] > b[column] ? 1 : a.id - b.id;
/** The statements that test rows' texts one by one (`like`), not read through an index. */
const rowsTested = (statements: string[]) =>
  statements.filter((text) => text.includes(' like ') && text.includes('"x"'));
const searched = (text: string) =>
  text.includes('expenses_search') || text.includes(' like ') || text.includes('_folded');

/** Page `page` (of 10 rows) of the company's expenses that match `filters`, in `sort`. */
const pageOf = (
  source: ListSource,
  filters: ExpenseFilters,
  sort: Parameters<typeof listExpenses>[3],
  page: number,
) => listExpenses(source, 1, filters, sort, { page, perPage: 10 }, urls);

/** The first page of `filters` by amount holds `matches`, all of them, and says their count. */
async function assertFirstPageByAmount(
  source: ListSource,
  filters: ExpenseFilters,
  matches: Row[],
) {
  const page = await pageOf(source, filters, { field: 'amount', direction: 'asc' }, 1);
  assert.equal(page.meta.total, matches.length);
  const byAmount = [...matches].sort(
    (a, b) => Number.parseFloat(a.amount) - Number.parseFloat(b.amount) || a.id - b.id,
  );
  assert.deepEqual(
    page.data.map((row) => row.id),
    byAmount.map((e) => e.id),
  );
}

/** Page 2 (of 10 rows) of `filters` in the order given holds the 11th to 20th of `matches`. */
async function assertSecondPage(
  source: ListSource,
  filters: ExpenseFilters,
  field: 'updated_at' | 'expense_date',
  direction: 'asc' | 'desc',
  matches: Row[],
) {
  const page = await pageOf(source, filters, { field, direction }, 2);
  const ordered = direction === 'asc' ? matches : [...matches].reverse();
  assert.equal(page.meta.total, matches.length, `${field} ${direction}`);
  assert.deepEqual(
    page.data.map((row) => row.id),
    ordered.slice(10, 20).map((e) => e.id),
    `${field} ${direction}`,
  );
}

it('a walk from the bound of updated_since on updated_at seeks its ends without the search (SQLite)', async (t) => {
  const { source, statements } = await loggedSource(t);
  const updatedSince = dayOf(100);
  const matches = expenses.filter((e) => e.updated_at >= updatedSince).sort(byColumn('updated_at'));
  for (const direction of ['asc', 'desc'] as const) {
    await assertSecondPage(
      source,
      { search: 'trip', updatedSince },
      'updated_at',
      direction,
      matches,
    );
  }
  const ends = statements.filter((text) => text.includes('as "value"') && text.includes('limit'));
  assert.ok(ends.length > 0, 'the walk seeks its ends');
  for (const text of ends) assert.ok(!searched(text), `an end sought through the search: ${text}`);
});

it('a few matches spread through the bounds on the sort column are gathered from their texts, no row tested (SQLite)', async (t) => {
  const { source, statements } = await loggedSource(t);
  // A quarter of the rows, over the whole year: a walk to page 2 would test 80 rows.
  const updatedSince = dayOf(100);
  const from = dayOf(0).slice(0, 10);
  const to = dayOf(399).slice(0, 10);
  const cabs = expenses.filter((e) => e.merchant_name === 'Yellow Cab');
  const ways = [
    {
      filters: { search: 'cab', updatedSince },
      field: 'updated_at' as const,
      matches: cabs.filter((e) => e.updated_at >= updatedSince).sort(byColumn('updated_at')),
    },
    {
      filters: { search: 'cab', from, to },
      field: 'expense_date' as const,
      matches: cabs.sort(byColumn('expense_date')),
    },
  ];
  for (const { filters, field, matches } of ways) {
    for (const direction of ['asc', 'desc'] as const) {
      statements.length = 0;
      await assertSecondPage(source, filters, field, direction, matches);
      assert.deepEqual(rowsTested(statements), [], `${field} ${direction}`);
    }
  }
});

it('a broad search within a recent updated_since reads its few rows once for the page and its total (SQLite)', async (t) => {
  const { source, statements } = await loggedSource(t);
  // "i" is in every title: the last days' updates are fewer rows than its texts over the ratio.
  const updatedSince = dayOf(396);
  const matches = expenses.filter((e) => e.updated_at >= updatedSince);
  assert.equal(matches.length, 4);
  await assertFirstPageByAmount(source, { search: 'i', updatedSince }, matches);
  const tested = rowsTested(statements);
  assert.equal(tested.length, 1, `the rows in the bounds tested once: ${tested.join('\n')}`);
  assert.match(tested[0] as string, /count\(\*\) over \(\)/);
});

it('a broad search in a day’s window reads its texts’ entries of the window, testing no row (SQLite)', async (t) => {
  const { source, statements, sqlite } = await loggedSource(t);
  const [from, to] = [dayOf(200).slice(0, 10), dayOf(202).slice(0, 10)];
  const matches = expenses.filter((e) => e.expense_date >= from && e.expense_date <= to);
  await assertFirstPageByAmount(source, { search: 'i', from, to }, matches);
  const tested = rowsTested(statements);
  assert.deepEqual(tested, []);
  const texts = statements.filter((text) =>
    text.includes('indexed by "expenses_title_folded_list"'),
  );
  assert.ok(texts.length > 0, statements.join('\n'));
  // Each text's entries of the window are a range of its index: the date follows the text.
  for (const text of texts) {
    const unbound = Array.from(text.matchAll(/\?/g), () => null);
    const plan = sqlite.prepare(`explain query plan ${text}`).all(unbound) as { detail: string }[];
    const reads = plan.map((step) => step.detail).filter((detail) => detail.includes('_folded'));
    assert.equal(reads.length, 2, text);
    for (const detail of reads) {
      assert.match(detail, /_folded=\? AND expense_date>\? AND expense_date<\?\)$/);
    }
  }
});

it('a company whose expenses have samples counts a search’s updated_since from them, with no probe (SQLite)', async (t) => {
  const { handle } = await useDatabase(t, 'sqlite');
  if (handle.dialect !== 'sqlite') throw new Error('a SQLite suite');
  const dir = useTempDir(t);
  const minute = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
  // Enough expenses for the list to have samples (SAMPLED_MIN_ROWS), two statuses taking turns.
  const many = Array.from({ length: SAMPLED_MIN_ROWS }, (_, i) =>
    expense(1, i + 1, 1, 1, {
      status: i % 2 === 0 ? 'paid' : 'pending',
      title: `Trip ${i % 20}`,
      merchant_name: MERCHANTS[i % MERCHANTS.length],
      updated_at: minute(i),
    }),
  );
  const records = [company(1), employee(1, 1), category(1, 1), ...many];
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  const { source, statements } = loggedListSource(handle.sqlite);
  const ways: Array<{ filters: ExpenseFilters; matches: typeof many }> = [
    // "i" is in every title: the last 30 minutes' updates are the rows to test.
    { filters: { search: 'i', updatedSince: minute(19_970) }, matches: many.slice(19_970) },
    // Half the paid ones since then carry "cab": read through the texts' indexes.
    {
      filters: { search: 'cab', status: ['paid'], updatedSince: minute(5_000) },
      matches: many
        .slice(5_000)
        .filter((e) => e.status === 'paid' && e.merchant_name === 'Yellow Cab'),
    },
  ];
  for (const { filters, matches } of ways) {
    statements.length = 0;
    const page = await pageOf(source, filters, { field: 'id', direction: 'asc' }, 2);
    assert.equal(page.meta.total, matches.length, filters.search);
    assert.deepEqual(
      page.data.map((row) => row.id),
      matches.slice(10, 20).map((e) => e.id),
    );
    const probes = statements.filter((text) => text.includes('as "bounded"'));
    assert.deepEqual(probes, [], `the bounds' rows probed: ${filters.search}`);
  }
});
