import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { expenseListQueries } from '../../src/db/expense-lists.ts';
import { listExpenses } from '../../src/db/expenses.queries.ts';
import { idsOf, orderedIds } from '../../src/db/list-order.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { testDialects, useDatabase, useTempDir } from '../helpers/databases.ts';
import { freshListSource, loggedListSource } from '../helpers/list-source.ts';
import { postgresPlan } from '../helpers/plans.ts';
import { category, company, employee, expense, writeNdjson } from '../helpers/records.ts';

const DAY = 86_400_000;
const dayOf = (days: number) => new Date(Date.UTC(2025, 0, 1) + days * DAY).toISOString();
const ROWS = 6000;
const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

/** A PostgreSQL database holding company 1's `expenses`, its statistics made. */
async function postgresWith(
  t: Parameters<typeof useDatabase>[0],
  expenses: ReturnType<typeof expense>[],
) {
  const { handle } = await useDatabase(t, 'postgres');
  if (handle.dialect !== 'postgres') throw new Error('a PostgreSQL test');
  const dir = useTempDir(t);
  const records = [company(1), employee(1, 1), category(1, 1), ...expenses];
  await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));
  await sql`vacuum analyze expenses`.execute(handle.db);
  return handle;
}

/**
 * An expense search within date bounds read through its texts (`carryingTexts`) reads each text
 * in an index of its column, where `updated_at` follows it (migration 0024; the date in the
 * other, migration 0021). PostgreSQL can find a text by equality in that column's trigram index
 * too, and chose to for a merchant most expenses have: on the bench data, within a narrow
 * `updated_since`, its 50,000 entries read there and intersected with the bounds' rows took 45
 * ms, against 4.7 ms in the merchant's own index; on these few rows it does so within half of
 * the dates.
 */
it('a search within an updated_since reads a common text in its column’s index, not its trigram index (PostgreSQL)', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  const expenses = Array.from({ length: ROWS }, (_, i) =>
    expense(1, i + 1, 1, 1, {
      title: `Trip ${i % 300}`,
      merchant_name: i % 10 === 0 ? `Shop ${i}` : 'Deutsche Bahn',
      expense_date: dayOf(i % 400).slice(0, 10),
      updated_at: dayOf((i * 7) % 400),
    }),
  );
  const handle = await postgresWith(t, expenses);

  const { source, queries: compiled } = loggedListSource(handle.pool);
  const updatedSince = dayOf(200);
  const page = await listExpenses(
    source,
    1,
    { search: 'bahn', updatedSince },
    { field: 'id', direction: 'asc' },
    { page: 1, perPage: 10 },
    { receiptUrl: () => '' },
  );
  const matches = expenses.filter(
    (e) => e.merchant_name === 'Deutsche Bahn' && e.updated_at >= updatedSince,
  );
  assert.equal(page.meta.total, matches.length);
  const carrying = compiled.filter((query) => query.sql.includes('"merchant_folded" in'));
  assert.ok(carrying.length > 0, compiled.map((query) => query.sql).join('\n'));
  for (const query of carrying) {
    const plan = await postgresPlan(handle.db, query, ['enable_seqscan']);
    assert.doesNotMatch(plan, /_trgm/, plan);
    assert.match(plan, /expenses_merchant_folded_updated/, plan);
  }
});

/**
 * A walk in a sort order tests each row's texts as it passes it (`testedOnEachRow`). PostgreSQL
 * can answer a LIKE from the trigram indexes, and did for the walks of searches on the bench
 * data: the whole match of a merchant most expenses share read into a bitmap and intersected
 * with the walk's rows (23.6 ms for a walk of 1,001 rows, 2.5 ms testing them). Here the planner
 * may read nothing but bitmaps, the trigram indexes' only way: the walk's test must be no
 * operator they serve, so its plan names none of them.
 */
it('a walk tests each row’s texts and never reads the trigram indexes (PostgreSQL)', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  const expenses = Array.from({ length: ROWS }, (_, i) =>
    expense(1, i + 1, 1, 1, {
      title: `Trip ${i % 300}`,
      merchant_name: i % 50 === 0 ? `Shop ${i}` : 'Deutsche Bahn',
      created_at: dayOf(i % 400),
    }),
  );
  const handle = await postgresWith(t, expenses);

  const source = freshListSource(handle.db);
  const lists = await expenseListQueries(source, 1, { search: 'shop' }, 'created_at');
  assert.ok(lists.walking);
  const order = { column: 'x.created_at', id: 'x.id', direction: 'desc' } as const;
  const walk = orderedIds(lists.walking, order).limit(10);
  const rows = await walk.execute();
  const shops = expenses
    .filter((e) => e.merchant_name.startsWith('Shop'))
    .sort((a, b) =>
      a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id,
    );
  assert.deepEqual(
    idsOf(rows),
    shops.slice(0, 10).map((e) => e.id),
  );
  const plan = await postgresPlan(handle.db, walk.compile(), [
    'enable_seqscan',
    'enable_indexscan',
    'enable_indexonlyscan',
  ]);
  assert.doesNotMatch(plan, /_trgm/, plan);
});
