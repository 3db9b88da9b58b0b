import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import { type CompiledQuery, Migrator, sql } from 'kysely';
import type { Dialect } from '../../src/db/connect.ts';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import type { ListSource } from '../../src/db/list-source.ts';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { loggedListSource } from '../helpers/list-source.ts';
import { postgresPlan } from '../helpers/plans.ts';
import { category, company, employee, expense, writeNdjson } from '../helpers/records.ts';

const INDEXES = ['expenses_title_folded_updated', 'expenses_merchant_folded_updated'];
const MERCHANTS = ['Yellow Cab', 'IKEA', 'Migros', 'Deutsche Bahn'];
const DAY = 86_400_000;
const dayOf = (days: number) => new Date(Date.UTC(2025, 0, 1) + days * DAY).toISOString();

const expenses = Array.from({ length: 2000 }, (_, i) =>
  expense(1, i + 1, 1, 1, {
    title: `Trip ${i % 20}`,
    merchant_name: MERCHANTS[i % MERCHANTS.length],
    updated_at: dayOf((i * 7) % 400),
  }),
);

/** The company's expenses imported, and a logged list source over them. */
async function imported(t: Parameters<typeof useDatabase>[0], dialect: Dialect) {
  const { handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const records = [company(1), employee(1, 1), category(1, 1), ...expenses];
  await importFile(handle, new FileReceiptStore(join(dir, 'store')), writeNdjson(dir, records));
  const { source, queries } = loggedListSource(
    handle.dialect === 'sqlite' ? handle.sqlite : handle.pool,
  );
  return { handle, source, statements: queries };
}

/** Page `page` (of `perPage`, in id order) of a search within an `updated_since` holds `matches`' share and says their count. */
async function assertPage(
  source: ListSource,
  filters: { search: string; updatedSince: string },
  page: number,
  perPage: number,
  matches: typeof expenses,
) {
  const answer = await listExpenses(
    source,
    1,
    filters,
    { field: 'id', direction: 'asc' },
    { page, perPage },
    { receiptUrl: () => '' },
  );
  assert.equal(answer.meta.total, matches.length);
  assert.deepEqual(
    answer.data.map((row) => row.id),
    matches.slice((page - 1) * perPage, page * perPage).map((e) => e.id),
  );
}

/** The statements that read a search's texts within an `updated_since` through the texts' indexes. */
const readingTexts = (statements: CompiledQuery[]) =>
  statements.filter(
    (query) => query.sql.includes('"merchant_folded" in') && query.sql.includes('"updated_at" >='),
  );

describeEachDialect('the indexes of expense texts keyed by updated_at', (dialect) => {
  it('read a search within an updated_since in its bounds alone on PostgreSQL from migration 0024; SQLite has none', async (t) => {
    const { handle, source, statements } = await imported(t, dialect);
    // The answer, on either database: the cabs updated in the last 40 days, in id order.
    const updatedSince = dayOf(360);
    const cabs = expenses.filter(
      (e) => e.merchant_name === 'Yellow Cab' && e.updated_at >= updatedSince,
    );
    assert.ok(cabs.length > 20 && cabs.length < 100);
    await assertPage(source, { search: 'cab', updatedSince }, 2, 10, cabs);

    if (handle.dialect === 'sqlite') {
      const indexes = handle.sqlite.prepare('pragma index_list(expenses)').all() as {
        name: string;
      }[];
      for (const name of INDEXES) {
        assert.ok(!indexes.some((index) => index.name === name), `${name} on SQLite`);
      }
      return;
    }
    const reads = readingTexts(statements);
    assert.ok(reads.length >= 2, 'the count and the page read the texts’ indexes');
    // The index-only scan needs the table's pages marked all-visible, as the import's vacuum
    // leaves them.
    await sql`vacuum analyze expenses`.execute(handle.db);
    const plans = () =>
      Promise.all(
        reads.map((query) =>
          postgresPlan(source.db, query, ['enable_seqscan', 'enable_bitmapscan']),
        ),
      );
    // Each text's entries since `updated_since` are a range of its index: the time follows it.
    for (const plan of await plans()) {
      for (const name of INDEXES) {
        assert.match(plan, new RegExp(`Index Only Scan using ${name}\\b`), plan);
      }
      assert.match(plan, /Index Cond: .*updated_at >=/, plan);
    }

    const { error } = await new Migrator({ db: handle.db, provider: migrationProvider }).migrateTo(
      '0023_covering_leave_employee_index',
    );
    assert.equal(error, undefined);
    // Before it, `updated_at` is tested in every entry of the texts (a filter, not a bound).
    for (const plan of await plans()) {
      for (const name of INDEXES) assert.doesNotMatch(plan, new RegExp(`\\b${name}\\b`), plan);
      assert.doesNotMatch(plan, /Index Cond: .*updated_at >=/, plan);
    }
    const { applied } = await migrateToLatest(handle.db);
    assert.equal(applied[0], '0024_expense_text_updated_indexes');
    for (const plan of await plans()) {
      for (const name of INDEXES) {
        assert.match(plan, new RegExp(`Index Only Scan using ${name}\\b`), plan);
      }
    }
  });

  it('a broad search within the last days: SQLite tests the few rows in the bounds, PostgreSQL reads its texts there', async (t) => {
    const { handle, source, statements } = await imported(t, dialect);
    // "i" is in every title: the last four days' updates are few beside its texts' 2,000 rows.
    const updatedSince = dayOf(396);
    const recent = expenses.filter((e) => e.updated_at >= updatedSince);
    assert.ok(recent.length > 0 && recent.length < 50);
    await assertPage(source, { search: 'i', updatedSince }, 1, 100, recent);
    // The expenses' own texts tested one by one (`like`), not the distinct texts looked up.
    const tested = statements.filter(
      (query) => query.sql.includes(' like ') && query.sql.includes('"x"'),
    );
    if (handle.dialect === 'sqlite') {
      assert.ok(tested.length > 0, 'SQLite tests the rows in the bounds');
    } else {
      assert.deepEqual(
        tested.map((query) => query.sql),
        [],
        'PostgreSQL tests no row: the texts in the bounds are a range of their indexes',
      );
      assert.ok(readingTexts(statements).length > 0, 'the texts read');
    }
  });
});
