import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { Migrator } from 'kysely';
import { companyDataVersion } from '../../src/db/companies.queries.ts';
import type { DatabaseHandle, Dialect } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { columnSamples, monthCounts } from '../../src/db/list-samples-load.ts';
import { MONTH_COUNTS_MAX } from '../../src/db/list-samples-make.ts';
import { migrateDatabase, migrationProvider } from '../../src/db/migrate.ts';
import { samplesOf } from '../../src/db/sampled-filters.ts';
import {
  MONTH_STRIDE,
  monthOf,
  SAMPLE_INTERVAL,
  SAMPLED_LISTS,
  SAMPLED_MIN_ROWS,
  type SampledListName,
} from '../../src/db/sampled-lists.ts';
import { mulberry32, pick } from '../../src/demo/random.ts';
import { type ImportOptions, importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import {
  describeEachDialect,
  filledTemplate,
  useDatabase,
  useTempDir,
} from '../helpers/databases.ts';
import { freshListSource } from '../helpers/list-source.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

/** A long list, and a few thousand rows past the last full block of it. */
const COUNT = SAMPLED_MIN_ROWS + 2_345;
const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Every list's month counts as stored, in key order. */
const storedMonthCounts = (db: Db) =>
  db
    .selectFrom('list_sample_months')
    .selectAll()
    .orderBy('list')
    .orderBy('sort_column')
    .orderBy('date_column')
    .execute();

/** A row as the samples see it: its id, status, group and sort values. */
interface SampledRow {
  id: number;
  status: string;
  group: number;
  keys: Record<string, string | number>;
}

/**
 * Company 1's long lists with many ties in every sort order (a few hundred distinct dates and
 * amounts), ids out of order with the dates; every leave type and category in every status.
 */
function records() {
  const rng = mulberry32(20261127);
  const out: unknown[] = [company(1)];
  for (let e = 1; e <= 5; e++) out.push(employee(1, e));
  for (let g = 1; g <= 3; g++) out.push(leaveType(1, g), category(1, g));
  const leaves: SampledRow[] = [];
  const expenses: SampledRow[] = [];
  for (let i = 0; i < COUNT; i++) {
    const id = COUNT - i;
    const start = START + Math.floor(rng() * 400) * DAY;
    const end = start + Math.floor(rng() * 5) * DAY;
    const created = start - Math.floor(rng() * 100) * 60_000;
    const updated = created + Math.floor(rng() * 3) * DAY;
    const leaveStatus = pick(rng, ['approved', 'pending', 'rejected', 'cancelled']);
    const leaveType = 1 + Math.floor(rng() * 3);
    out.push(
      leave(1, id, 1 + (i % 5), leaveType, {
        status: leaveStatus,
        start_date: date(start),
        end_date: date(end),
        created_at: stamp(created),
        updated_at: stamp(updated),
      }),
    );
    leaves.push({
      id,
      status: leaveStatus,
      group: leaveType,
      keys: {
        id,
        start_date: date(start),
        end_date: date(end),
        created_at: stamp(created),
        updated_at: stamp(updated),
      },
    });
    const cents = 100 + Math.floor(rng() * 300);
    const expenseStatus = pick(rng, ['paid', 'approved', 'pending', 'rejected']);
    const categoryId = 1 + Math.floor(rng() * 3);
    out.push(
      expense(1, id, 1 + (i % 5), categoryId, {
        status: expenseStatus,
        amount: (cents / 100).toFixed(2),
        expense_date: date(start),
        created_at: stamp(created),
        updated_at: stamp(updated),
      }),
    );
    expenses.push({
      id,
      status: expenseStatus,
      group: categoryId,
      keys: {
        id,
        expense_date: date(start),
        amount_e4: cents * 100,
        created_at: stamp(created),
        updated_at: stamp(updated),
      },
    });
  }
  return { out, lists: { leaves, expenses } satisfies Record<SampledListName, SampledRow[]> };
}

/**
 * The samples of one order as the rows say: every SAMPLE_INTERVAL-th row's sort value and id,
 * and the rows of each status and group up to it.
 */
function expectedSamples(rows: SampledRow[], column: string, groups: Array<[string, number]>) {
  const sorted = [...rows].sort((a, b) => {
    const [ka, kb] = [a.keys[column] as string | number, b.keys[column] as string | number];
    return ka < kb ? -1 : ka > kb ? 1 : a.id - b.id;
  });
  const position = new Map(groups.map(([status, group], i) => [`${status} ${group}`, i]));
  const running = new Array<number>(groups.length).fill(0);
  const samples: Array<{ value: string | number; id: number; counts: number[] }> = [];
  sorted.forEach((row, i) => {
    const g = position.get(`${row.status} ${row.group}`) as number;
    running[g] = (running[g] as number) + 1;
    if ((i + 1) % SAMPLE_INTERVAL === 0) {
      samples.push({
        value: row.keys[column] as string | number,
        id: row.id,
        counts: [...running],
      });
    }
  });
  return samples;
}

/**
 * The month counts of one order and date column as the rows say: for every MONTH_STRIDE-th
 * sample, the rows up to and including it dated in each month or before, of each status.
 */
function expectedMonths(rows: SampledRow[], column: string, dated: string, statuses: string[]) {
  const sorted = [...rows].sort((a, b) => {
    const [ka, kb] = [a.keys[column] as string | number, b.keys[column] as string | number];
    return ka < kb ? -1 : ka > kb ? 1 : a.id - b.id;
  });
  const months = rows.map((row) => monthOf(row.keys[dated] as string));
  const first = Math.min(...months);
  const count = Math.max(...months) - first + 1;
  const counts: number[] = [];
  const running = new Array<number>(count * statuses.length).fill(0);
  sorted.forEach((row, i) => {
    const m = monthOf(row.keys[dated] as string) - first;
    const at = m * statuses.length + statuses.indexOf(row.status);
    running[at] = (running[at] as number) + 1;
    if ((i + 1) % (SAMPLE_INTERVAL * MONTH_STRIDE) !== 0) return;
    // Up to each month: this month's rows and every earlier month's.
    const upTo = [...running];
    for (let k = statuses.length; k < upTo.length; k++) {
      upTo[k] = (upTo[k] as number) + (upTo[k - statuses.length] as number);
    }
    counts.push(...upTo);
  });
  return { first, months: count, counts };
}

/** `records()` imported (no receipts among them), once per dialect and test process. */
const imported = {
  sqlite: filledTemplate('sqlite', importRecords),
  postgres: filledTemplate('postgres', importRecords),
};

async function importRecords(handle: DatabaseHandle): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cdapi-samples-'));
  try {
    await importFile(
      handle,
      new FileReceiptStore(join(dir, 'store')),
      writeNdjson(dir, records().out),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A copy of a database with `records()` imported, a folder and a receipt store for more. */
async function withRecords(t: TestContext, dialect: Dialect) {
  const { handle } = await useDatabase(t, dialect, { template: imported[dialect] });
  const dir = useTempDir(t);
  const store = new FileReceiptStore(join(dir, 'store'));
  return { handle, dir, store };
}

/**
 * Imports `records()` with `options` (where the samples are made: see `refreshDerived`) and
 * checks every stored sample and month count against the rows.
 */
async function checkSamplesOfImport(t: TestContext, dialect: Dialect, options: ImportOptions) {
  const { handle } = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const { out, lists } = records();
  await importFile(
    handle,
    new FileReceiptStore(join(dir, 'store')),
    writeNdjson(dir, out),
    options,
  );

  for (const [name, list] of Object.entries(SAMPLED_LISTS) as [
    SampledListName,
    (typeof SAMPLED_LISTS)[SampledListName],
  ][]) {
    const set = await handle.db
      .selectFrom('list_sample_sets')
      .select(['groups', 'totals'])
      .where('company_id', '=', 1)
      .where('list', '=', name)
      .executeTakeFirstOrThrow();
    const groups = JSON.parse(set.groups) as Array<[string, number]>;
    const rows = lists[name];
    assert.equal(
      groups.length,
      new Set(rows.map((row) => `${row.status} ${row.group}`)).size,
      `${name}: every status and group`,
    );
    assert.equal(
      (JSON.parse(set.totals) as number[]).reduce((sum, n) => sum + n, 0),
      rows.length,
    );
    for (const column of Object.keys(list.columns)) {
      const stored = await handle.db
        .selectFrom('list_samples')
        .select(['seq', 'sort_value', 'id', 'counts'])
        .where('company_id', '=', 1)
        .where('list', '=', name)
        .where('sort_column', '=', column)
        .orderBy('seq')
        .execute();
      const expected = expectedSamples(rows, column, groups);
      assert.equal(expected.length, Math.floor(COUNT / SAMPLE_INTERVAL));
      assert.deepEqual(
        stored.map((sample) => ({
          value: JSON.parse(sample.sort_value) as string | number,
          id: Number(sample.id),
          counts: JSON.parse(sample.counts) as number[],
        })),
        expected,
        `${name} by ${column}`,
      );
      assert.deepEqual(
        stored.map((sample) => Number(sample.seq)),
        expected.map((_, i) => i),
      );
      const statuses = [...new Set(groups.map(([status]) => status))];
      const months = await handle.db
        .selectFrom('list_sample_months')
        .select(['date_column', 'first_month', 'months', 'statuses', 'counts'])
        .where('company_id', '=', 1)
        .where('list', '=', name)
        .where('sort_column', '=', column)
        .orderBy('date_column')
        .execute();
      const dated = list.dated.filter((date) => date !== column);
      assert.deepEqual(
        months.map((row) => row.date_column),
        [...dated].sort(),
        `${name} by ${column}: its dated columns but its own`,
      );
      for (const row of months) {
        const bytes = new Uint8Array(row.counts);
        const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        assert.deepEqual(
          {
            first: Number(row.first_month),
            months: Number(row.months),
            counts: Array.from({ length: bytes.byteLength / 4 }, (_, i) =>
              view.getInt32(i * 4, true),
            ),
          },
          expectedMonths(rows, column, row.date_column, statuses),
          `${name} by ${column}, months of ${row.date_column}`,
        );
        assert.deepEqual(JSON.parse(row.statuses), statuses);
      }
    }
  }
}

describeEachDialect('list samples', (dialect) => {
  it('are every thousandth row of each sort order (its value and id), with the rows of each status and group up to it', (t) =>
    checkSamplesOfImport(t, dialect, {}));

  if (dialect === 'sqlite') {
    it('are the same made beside the main thread, as a large `cdapi import` makes them (a list on a thread of its own)', (t) =>
      checkSamplesOfImport(t, dialect, { writerThread: true }));

    it('are the same made on threads only, as the admin API makes them (each list on a thread of its own)', (t) =>
      checkSamplesOfImport(t, dialect, { writerThread: true, afterCommitOnThreads: true }));
  }

  it('are read lazily, never from another version: a set loaded before an import that made them again reads none of the new ones', async (t) => {
    const { handle, dir, store } = await withRecords(t, dialect);
    const { db } = handle;
    const version = () => companyDataVersion(db, 1);
    const source = freshListSource(db);
    const before = await samplesOf(source, 1, 'leaves', await version());
    assert.ok(before);
    assert.ok((await columnSamples(db, before, 1, 'leaves', 'id')).ids.length > 0);
    // A new leave: the list changes, and its samples are made again for the new version.
    const added = leave(1, COUNT + 1, 1, 1, { start_date: '2024-02-01', end_date: '2024-02-02' });
    await importFile(handle, store, writeNdjson(dir, [added]));
    assert.equal((await columnSamples(db, before, 1, 'leaves', 'created_at')).ids.length, 0);
    assert.equal(await monthCounts(db, before, 1, 'leaves', 'id', 'start_date'), null);
    const after = await samplesOf(source, 1, 'leaves', await version());
    assert.ok(after && after !== before);
    assert.ok((await columnSamples(db, after, 1, 'leaves', 'created_at')).ids.length > 0);
    assert.ok(await monthCounts(db, after, 1, 'leaves', 'id', 'start_date'));
  });

  it('made before migration 0013 (no month counts) are made again by the next import, of any company', async (t) => {
    const { handle, dir, store } = await withRecords(t, dialect);
    const { db } = handle;
    const months = () => storedMonthCounts(db);
    const samples = () =>
      db
        .selectFrom('list_samples')
        .selectAll()
        .orderBy('list')
        .orderBy('sort_column')
        .orderBy('seq')
        .execute();
    const made = { months: await months(), samples: await samples() };
    assert.ok(made.months.length > 0);
    await db.deleteFrom('list_sample_months').execute();
    await importFile(handle, store, writeNdjson(dir, [company(2)]));
    assert.deepEqual({ months: await months(), samples: await samples() }, made);
  });

  it('made before migration 0013 get their month counts from the migration itself', async (t) => {
    const { handle } = await withRecords(t, dialect);
    const { db } = handle;
    const months = () => storedMonthCounts(db);
    const made = await months();
    assert.ok(made.length > 0);
    // Back to the schema before month counts (the table goes), then forward as `cdapi migrate`.
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(
      '0012_receipt_file_indexes',
    );
    assert.equal(error, undefined);
    const applied = (await migrateDatabase(handle)).applied;
    assert.equal(applied[0], '0013_list_sample_months');
    assert.deepEqual(await months(), made);
  });

  it('are made after the commit: read without them meanwhile, healed by the next import, and carried to a version their lists did not change in', async (t) => {
    const { handle, dir, store } = await withRecords(t, dialect);
    const { db } = handle;
    const version = () => companyDataVersion(db, 1);
    const stored = async () => ({
      sets: await db
        .selectFrom('list_sample_sets')
        .selectAll()
        .where('company_id', '=', 1)
        .orderBy('list')
        .execute(),
      samples: await db
        .selectFrom('list_samples')
        .selectAll()
        .where('company_id', '=', 1)
        .orderBy('list')
        .orderBy('sort_column')
        .orderBy('seq')
        .execute(),
    });
    const versions = (sets: Array<{ list: string; data_version: number }>) =>
      sets.map((set) => [set.list, Number(set.data_version)]);
    const made = await stored();
    const before = await version();
    assert.deepEqual(versions(made.sets), [
      ['expenses', before],
      ['leaves', before],
    ]);

    // An import that changes the company's own row alone: a new version, the same samples.
    await importFile(handle, store, writeNdjson(dir, [company(1, { name: 'Renamed' })]));
    const renamed = await version();
    assert.ok(renamed > before);
    const carried = await stored();
    assert.deepEqual(versions(carried.sets), [
      ['expenses', renamed],
      ['leaves', renamed],
    ]);
    assert.deepEqual(carried.samples, made.samples);

    // The state an import leaves if its process ends between its commit and its samples.
    await db
      .updateTable('list_sample_sets')
      .set({ data_version: -1, groups: '[]', totals: '[]' })
      .where('company_id', '=', 1)
      .where('list', '=', 'leaves')
      .execute();
    await db
      .deleteFrom('list_samples')
      .where('company_id', '=', 1)
      .where('list', '=', 'leaves')
      .execute();
    // Meanwhile the list is read without samples, and that is not kept for the version.
    const source = freshListSource(db);
    assert.equal(await samplesOf(source, 1, 'leaves', renamed), null);
    assert.ok(await samplesOf(source, 1, 'expenses', renamed), 'the other list has its own');

    // The next import, of another company, makes them again.
    await importFile(handle, store, writeNdjson(dir, [company(2)]));
    assert.equal(await version(), renamed);
    assert.deepEqual(await stored(), carried);
    const leaves = carried.sets.find((set) => set.list === 'leaves');
    const samples = await samplesOf(source, 1, 'leaves', renamed);
    assert.deepEqual(samples?.totals, JSON.parse(leaves?.totals ?? 'null'));
  });
});

describeEachDialect('list sample month counts', (dialect) => {
  it('are not made for a date whose months would pass MONTH_COUNTS_MAX', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    // Leaves from the year 1 to the year 9999: 119,988 months of start and end dates.
    const far = [
      leave(1, COUNT + 1, 1, 1, { start_date: '0001-01-01', end_date: '0001-01-02' }),
      leave(1, COUNT + 2, 1, 1, { start_date: '9999-12-30', end_date: '9999-12-31' }),
    ];
    const { out } = records();
    await importFile(
      handle,
      new FileReceiptStore(join(dir, 'store')),
      writeNdjson(dir, [...out, ...far]),
    );
    const dated = await handle.db
      .selectFrom('list_sample_months')
      .select(['list', 'date_column', 'months'])
      .distinct()
      .where('company_id', '=', 1)
      .orderBy('list')
      .orderBy('date_column')
      .execute();
    // Stored as counted over no month, so the set is not taken for one made before 0013.
    assert.deepEqual(
      dated.filter((row) => Number(row.months) === 0).map((row) => [row.list, row.date_column]),
      [
        ['leaves', 'end_date'],
        ['leaves', 'start_date'],
      ],
    );
    assert.deepEqual(
      [
        ...new Set(
          dated
            .filter((row) => Number(row.months) > 0)
            .map((row) => `${row.list} ${row.date_column}`),
        ),
      ],
      ['expenses expense_date', 'expenses updated_at', 'leaves updated_at'],
    );
    const source = freshListSource(handle.db);
    const set = await samplesOf(source, 1, 'leaves', await companyDataVersion(handle.db, 1));
    assert.ok(set);
    assert.equal(await monthCounts(handle.db, set, 1, 'leaves', 'id', 'start_date'), null);
    assert.ok(await monthCounts(handle.db, set, 1, 'leaves', 'id', 'updated_at'));
    const samples = Math.floor((COUNT + 2) / SAMPLE_INTERVAL / MONTH_STRIDE);
    assert.ok(119_988 * samples * 4 > MONTH_COUNTS_MAX, 'past the limit');
  });
});

describe('list samples on SQLite', () => {
  it('when another connection holds the write lock past the busy timeout after the commit, the import says its records are committed, does the steps after it, and the next import makes the samples', async (t) => {
    const { handle, target } = await useDatabase(t, 'sqlite');
    assert.ok(handle.dialect === 'sqlite' && target.dialect === 'sqlite');
    handle.sqlite.pragma('busy_timeout = 100');
    const other = new Database(target.path);
    t.after(() => other.close());
    const dir = useTempDir(t);
    const store = new FileReceiptStore(join(dir, 'store'));
    const summary = await importFile(handle, store, writeNdjson(dir, records().out), {
      onStep: (step) => {
        if (step.name === 'samples') other.exec('begin immediate');
        // The steps after it run all the same.
        if (step.name === 'statistics') other.exec('rollback');
      },
    });
    assert.deepEqual(summary.unfinished_steps, [
      'making the list samples failed (database is locked); the next import does it again',
    ]);
    const count = async (table: 'leaves' | 'list_samples') =>
      Number(
        (
          await handle.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count('leaves'), COUNT);
    assert.equal(await count('list_samples'), 0);

    await importFile(handle, store, writeNdjson(dir, [company(2)]));
    const sets = await handle.db
      .selectFrom('list_sample_sets')
      .innerJoin('companies', 'companies.id', 'list_sample_sets.company_id')
      .select(['list', 'list_sample_sets.data_version as set', 'companies.data_version as company'])
      .orderBy('list')
      .execute();
    assert.deepEqual(
      sets.map((row) => [row.list, row.set === row.company]),
      [
        ['expenses', true],
        ['leaves', true],
      ],
    );
    const orders = Object.keys(SAMPLED_LISTS.leaves.columns).length;
    assert.equal(await count('list_samples'), 2 * orders * Math.floor(COUNT / SAMPLE_INTERVAL));
  });
});
