import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Dialect } from '../../src/db/connect.ts';
import { FTS_DEFAULTS } from '../../src/import/deferred-indexes.ts';
import { ImportError } from '../../src/import/import-error.ts';
import { type ImportOptions, importFile } from '../../src/import/importer.ts';
import { MAX_LINE_BYTES } from '../../src/import/ndjson.ts';
import type { CommitStep } from '../../src/import/transaction.ts';
import { moneyToNumber } from '../../src/money.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import {
  type Cleanup,
  describeEachDialect,
  useDatabase,
  useTempDir,
} from '../helpers/databases.ts';
import { segmentsOf, settingsOf } from '../helpers/fts.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  smallCompany,
  writeJpeg,
  writeNdjson,
} from '../helpers/records.ts';
import { listFiles, snapshotDatabase, snapshotSchema } from '../helpers/snapshot.ts';

describeEachDialect('cdapi import', (dialect) => importerSuite(dialect, {}));
// Large files into SQLite are written by a second thread: the same behaviour, every case.
describe('cdapi import (sqlite, writer thread)', () =>
  importerSuite('sqlite', { writerThread: true }));

function importerSuite(dialect: Dialect, options: ImportOptions): void {
  async function setup(t: Cleanup) {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const receiptsDir = join(dir, 'store');
    const store = new FileReceiptStore(receiptsDir);
    const importAt = (file: string) => importFile(handle, store, file, options);
    const run = (records: unknown[], name?: string) => importAt(writeNdjson(dir, records, name));
    return { db: handle.db, dir, receiptsDir, run, importAt };
  }

  it('stores every record type, sensitive columns and attachments included', async (t) => {
    const { db, run } = await setup(t);
    const summary = await run([
      company(1),
      employee(1, 10, {
        national_id: 'NID-1',
        salary: '85000.50',
        iban: 'TR00',
        address: 'Street 1',
      }),
      leaveType(1, 1),
      leave(1, 100, 10, 1, {
        document: {
          deadline: '2026-03-10',
          obligation_status: 'pending',
          attachments: [{ file_name: 'report.pdf' }],
        },
      }),
      category(1, 1),
      expense(1, 500, 10, 1, {
        items: [
          { name: 'Ride', quantity: 1, price: '1000.50' },
          { name: 'Tip', quantity: 2, price: 125 },
        ],
      }),
    ]);
    assert.deepEqual(summary.counts, {
      company: 1,
      employee: 1,
      leave_type: 1,
      leave: 1,
      expense_category: 1,
      expense: 1,
    });
    const emp = await db.selectFrom('employees').selectAll().executeTakeFirstOrThrow();
    assert.equal(emp.full_name, 'Ayşe Yılmaz');
    assert.equal(emp.name_folded, 'ayse yilmaz');
    assert.equal(emp.national_id, 'NID-1');
    assert.equal(emp.salary_e4, 850005000);
    const lv = await db.selectFrom('leaves').selectAll().executeTakeFirstOrThrow();
    assert.equal(lv.start_date, '2026-03-02');
    assert.equal(lv.approved_at, '2026-02-20T08:00:00Z');
    assert.equal(lv.document_deadline, '2026-03-10');
    assert.equal(lv.document_obligation_status, 'pending');
    const files = await db.selectFrom('leave_attachments').select('file_name').execute();
    assert.deepEqual(files, [{ file_name: 'report.pdf' }]);
    const items = await db
      .selectFrom('expense_items')
      .select(['position', 'name', 'quantity', 'price_e4'])
      .orderBy('position')
      .execute();
    assert.deepEqual(items, [
      { position: 0, name: 'Ride', quantity: 1, price_e4: 10005000 },
      { position: 1, name: 'Tip', quantity: 2, price_e4: 1250000 },
    ]);
  });

  it('normalises timestamps with offsets and fractions to UTC seconds', async (t) => {
    const { db, run } = await setup(t);
    await run([
      ...smallCompany(1, 0).slice(0, 3),
      leave(1, 1, 1, 1, {
        created_at: '2026-02-19T11:30:15.987+03:00',
        updated_at: '2026-02-19t08:30:15z',
      }),
    ]);
    const row = await db
      .selectFrom('leaves')
      .select(['created_at', 'updated_at'])
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, {
      created_at: '2026-02-19T08:30:15Z',
      updated_at: '2026-02-19T08:30:15Z',
    });
  });

  it('keeps money exact: decimal strings and JSON numbers, zero-decimal currencies', async (t) => {
    const { db, run } = await setup(t);
    const amounts: Array<[string | number, string]> = [
      ['0.1', 'TRY'],
      [0.2, 'TRY'],
      ['19.99', 'EUR'],
      [1000000.01, 'EUR'],
      ['1500', 'JPY'],
      [1500, 'JPY'],
      ['1.234', 'KWD'],
      // Zeros before the digits and after the places are the same value.
      ['0000000000001.5000000000000', 'EUR'],
    ];
    await run(
      expensesOf(amounts, (amount, currency) => ({ amount, currency, tax_amount: 0, items: [] })),
    );
    const rows = await db
      .selectFrom('expenses')
      .select(['amount_e4', 'currency'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [moneyToNumber(r.amount_e4), r.currency]),
      [
        [0.1, 'TRY'],
        [0.2, 'TRY'],
        [19.99, 'EUR'],
        [1000000.01, 'EUR'],
        [1500, 'JPY'],
        [1500, 'JPY'],
        [1.234, 'KWD'],
        [1.5, 'EUR'],
      ],
    );
    assert.equal(
      JSON.stringify(rows.map((r) => moneyToNumber(r.amount_e4))),
      '[0.1,0.2,19.99,1000000.01,1500,1500,1.234,1.5]',
    );
  });

  it('reads a JSON number as written: one with more digits than a float holds is refused, never rounded', async (t) => {
    const { db, run } = await setup(t);
    // The record's line with a number's own text where one of its values says "@N@".
    const written = (record: unknown, text: string) =>
      JSON.stringify(record).replace('"@N@"', text);
    const amountOf = (id: number, text: string) =>
      written(
        expense(1, id, 1, 1, { amount: '@N@', currency: 'EUR', tax_amount: 0, items: [] }),
        text,
      );
    // A number a float holds is the value written, in any notation.
    await run([...smallCompany(1, 0), amountOf(100, '1.5e2'), amountOf(101, '1250.50')]);
    const stored = () =>
      db.selectFrom('expenses').select('amount_e4').where('id', '>=', 100).orderBy('id').execute();
    assert.deepEqual(
      (await stored()).map((r) => moneyToNumber(r.amount_e4)),
      [150, 1250.5],
    );
    const refused: Array<[line: string, message: string]> = [
      [amountOf(102, '1234567.8900000000001'), 'amount: has more than 2 decimal places'],
      [amountOf(102, '1e-400'), 'amount: has more than 2 decimal places'],
      [amountOf(102, ' \t1234567.8900000000001'), 'amount: has more than 2 decimal places'],
      [amountOf(102, '1E-400'), 'amount: has more than 2 decimal places'],
      [amountOf(102, '1e400'), 'amount: is too large'],
      [
        written(
          expense(1, 102, 1, 1, { currency: 'EUR', tax_amount: '@N@' }),
          '0.29999999999999999',
        ),
        'tax_amount: has more than 2 decimal places',
      ],
      [
        written(
          expense(1, 102, 1, 1, { items: [{ name: 'Fuel', quantity: 1, price: '@N@' }] }),
          '0.00001e-330',
        ),
        'items[0].price: has more than 4 decimal places',
      ],
      [
        written(employee(1, '@N@' as unknown as number), '5301.0000000000001'),
        `id: must be a positive integer of at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1): it is written with more digits than a number holds exactly`,
      ],
      [
        written(leave(1, 102, 1, 1, { days: '@N@' }), '366.00000000000001'),
        'days: must be a number from 0 to 366: it is written with more digits than a number holds exactly',
      ],
      // Past a float's range: too large, whatever its digits say.
      [
        written(leave(1, 102, 1, 1, { days: '@N@' }), '1e400'),
        'days: must be a number from 0 to 366: it is too large',
      ],
      [
        written(employee(1, '@N@' as unknown as number), '-1e400'),
        `id: must be a positive integer of at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1): it is too small`,
      ],
      // Read in time proportional to its length (a regular expression took minutes).
      [amountOf(102, `"0.${'0'.repeat(200_000)}1"`), 'amount: has more than 2 decimal places'],
    ];
    for (const [line, message] of refused) {
      await assert.rejects(run([line], 'refused.ndjson'), { message: `line 1: ${message}` });
    }
    assert.equal((await stored()).length, 2, 'nothing of the refused lines was stored');
  });

  it('takes item prices to 4 decimal places in any currency, amounts only to the currency’s', async (t) => {
    const { db, run } = await setup(t);
    const prices: Array<[string | number, string]> = [
      ['174.8', 'JPY'],
      [0.0125, 'JPY'],
      ['1.2345', 'EUR'],
      ['0.1235', 'KWD'],
    ];
    await run(
      expensesOf(prices, (price, currency) => ({
        currency,
        amount: 1000,
        tax_amount: 0,
        items: [{ name: 'Fuel', quantity: 40, price }],
      })),
    );
    const rows = await db
      .selectFrom('expense_items')
      .select('price_e4')
      .orderBy('expense_id')
      .execute();
    assert.deepEqual(
      rows.map((r) => moneyToNumber(r.price_e4)),
      [174.8, 0.0125, 1.2345, 0.1235],
    );
    const tooFine = expense(1, 200, 1, 1, {
      currency: 'EUR',
      items: [{ name: 'Fuel', quantity: 1, price: '1.23456' }],
    });
    await assert.rejects(run([tooFine], 'fine.ndjson'), {
      message: 'line 1: items[0].price: has more than 4 decimal places',
    });
  });

  it('takes amounts to the decimal places ISO 4217 gives their currency, not the ones shown', async (t) => {
    const { db, run } = await setup(t);
    // CLDR (the runtime's Intl data) shows HUF, IDR, COP and IQD without decimals.
    const amounts: Array<[string, string]> = [
      ['1250.50', 'HUF'],
      ['15000.50', 'IDR'],
      ['100.25', 'COP'],
      ['1.250', 'IQD'],
      ['0.5', 'MGA'],
      ['1.2345', 'CLF'],
      ['7.5', 'XAU'],
    ];
    await run(
      expensesOf(amounts, (amount, currency) => ({ amount, currency, tax_amount: 0, items: [] })),
    );
    const rows = await db.selectFrom('expenses').select('amount_e4').orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => moneyToNumber(r.amount_e4)),
      [1250.5, 15000.5, 100.25, 1.25, 0.5, 1.2345, 7.5],
    );
    for (const [amount, currency, places] of [
      ['1.505', 'HUF', 2],
      ['1.2345', 'IQD', 3],
      ['10.5', 'ISK', 0],
      ['10.5', 'XOF', 0],
    ] as const) {
      const line = expense(1, 300, 1, 1, { amount, currency, tax_amount: 0, items: [] });
      await assert.rejects(run([line], `${currency}.ndjson`), {
        message: `line 1: amount: has more than ${places} decimal places`,
      });
    }
  });

  it('takes the largest record the rules allow, every character written as an escape', async (t) => {
    const { db, run } = await setup(t);
    const text = (length: number) => 'ş'.repeat(length);
    const largest = expense(1, 1, 1, 1, {
      title: text(255),
      merchant_name: text(255),
      description: text(5000),
      rejected_reason: text(5000),
      items: Array.from({ length: 500 }, () => ({
        name: text(255),
        quantity: 1_000_000,
        price: '99999999999.9999',
      })),
    });
    const line = JSON.stringify(largest).replaceAll('ş', '\\u015f');
    assert.ok(Buffer.byteLength(line) > 800_000, 'close to the limit');
    await run([...smallCompany(1, 0).slice(0, 2), category(1, 1), line]);
    const items = await db.selectFrom('expense_items').select('name').execute();
    assert.equal(items.length, 500);
    assert.equal(items[0]?.name, text(255));
  });

  it('re-importing a file is idempotent and replaces children', async (t) => {
    const { db, run } = await setup(t);
    const records = [
      ...smallCompany(1, 0).slice(0, 3),
      leave(1, 1, 1, 1, {
        document: {
          deadline: null,
          obligation_status: null,
          attachments: [{ file_name: 'a.pdf' }],
        },
      }),
      category(1, 1),
      expense(1, 1, 1, 1),
      expense(1, 2, 1, 1),
    ];
    /** The children's rows with their serial ids: a rewritten row gets a new one. */
    const children = async () => ({
      attachments: await db.selectFrom('leave_attachments').selectAll().orderBy('id').execute(),
      items: await db.selectFrom('expense_items').selectAll().orderBy('id').execute(),
    });
    await run(records);
    const first = await snapshotDatabase(db);
    const firstChildren = await children();
    assert.ok(firstChildren.attachments.length > 0 && firstChildren.items.length > 0);
    await run(records);
    assert.deepEqual(withoutSerialIds(await snapshotDatabase(db)), withoutSerialIds(first));
    // Records the file repeats exactly keep their children's rows: none is rewritten.
    assert.deepEqual(await children(), firstChildren);

    // A record whose items changed gets the file's; the other expense keeps its rows.
    await run([expense(1, 1, 1, 1, { items: [{ name: 'Other', quantity: 2, price: '3.50' }] })]);
    const { items } = await children();
    const keptOf = (rows: typeof items) => rows.filter((row) => row.expense_id === 2);
    assert.deepEqual(keptOf(items), keptOf(firstChildren.items));
    assert.deepEqual(
      items.filter((row) => row.expense_id === 1).map((row) => [row.name, row.quantity]),
      [['Other', 2]],
    );

    await run([expense(1, 1, 1, 1, { title: 'Airport taxi', items: [] })]);
    const row = await db
      .selectFrom('expenses')
      .select(['title', 'title_folded'])
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { title: 'Airport taxi', title_folded: 'airport taxi' });
    const left = await db.selectFrom('expense_items').select('expense_id').execute();
    assert.deepEqual(
      left.map((item) => item.expense_id),
      keptOf(firstChildren.items).map(() => 2),
    );
  });

  it('re-importing leaves unchanged rows untouched and rewrites changed ones, nulls included', async (t) => {
    const { db, run } = await setup(t);
    const records = (reason: string | null) => [
      ...smallCompany(1, 0).slice(0, 3),
      leave(1, 1, 1, 1),
      leave(1, 2, 1, 1, { reason }),
      category(1, 1),
      expense(1, 1, 1, 1),
    ];
    await run(records(null));
    // Counts the rows an import rewrites: a re-import of the same values should rewrite none
    // (their indexes and search entries stay as they are).
    await sql`create table rewritten (tbl text)`.execute(db);
    if (dialect === 'postgres') {
      await sql`create function log_rewrite() returns trigger language plpgsql as $$
        begin insert into rewritten values (tg_table_name); return null; end $$`.execute(db);
    }
    for (const table of ['employees', 'leaves', 'expenses']) {
      const action =
        dialect === 'sqlite'
          ? `begin insert into rewritten values ('${table}'); end`
          : 'for each row execute function log_rewrite()';
      await sql.raw(`create trigger log_${table} after update on ${table} ${action}`).execute(db);
    }
    const rewritten = async () =>
      (await sql<{ tbl: string }>`select tbl from rewritten`.execute(db)).rows.map(
        (row) => row.tbl,
      );
    const reasonOf2 = async () =>
      (await db.selectFrom('leaves').select('reason').where('id', '=', 2).executeTakeFirstOrThrow())
        .reason;

    await run(records(null));
    assert.deepEqual(await rewritten(), []);
    // From null to a value and back: a comparison that treats null as unknown would miss both.
    await run(records('Family visit'));
    assert.deepEqual(await rewritten(), ['leaves']);
    assert.equal(await reasonOf2(), 'Family visit');
    await run(records(null));
    assert.deepEqual(await rewritten(), ['leaves', 'leaves']);
    assert.equal(await reasonOf2(), null);
  });

  it('ends a batch early when its records bring thousands of items, and stores them all', async (t) => {
    const { db, run } = await setup(t);
    // 12 expenses of 500 items: the 5,000-children limit splits them over three batches, and a
    // repeated id in a later batch replaces the earlier expense's items.
    const items = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `Item ${i}`, quantity: 1, price: '1.00' }));
    const expenses = Array.from({ length: 12 }, (_, i) =>
      expense(1, i + 1, 1, 1, { items: items(500) }),
    );
    await run([
      ...smallCompany(1, 0).slice(0, 2),
      category(1, 1),
      ...expenses,
      expense(1, 1, 1, 1, { items: items(3) }),
    ]);
    const counts = await db
      .selectFrom('expense_items')
      .select(['expense_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('expense_id')
      .orderBy('expense_id')
      .execute();
    assert.deepEqual(
      counts.map((row) => [row.expense_id, Number(row.n)]),
      Array.from({ length: 12 }, (_, i) => [i + 1, i === 0 ? 3 : 500]),
    );
  });

  it('refuses a leave id an earlier batch of a first load wrote for another company', async (t) => {
    // Leaves are named by no record, so the importer's references do not remember them: the
    // writer's look-up of stored ids is what finds the repeat, in the third batch of 500.
    const { db, run } = await setup(t);
    const lines = [
      company(1),
      company(2),
      employee(1, 1),
      employee(2, 2),
      leaveType(1, 1),
      leaveType(2, 2),
      ...Array.from({ length: 994 }, (_, i) => leave(1, i + 1, 1, 1)),
    ];
    for (const id of [1, 994]) {
      await assert.rejects(run([...lines, leave(2, id, 2, 2)]), {
        message: `line 1001: company_id: leave ${id} already belongs to company 1`,
      });
    }
    assert.deepEqual(await db.selectFrom('leaves').select('id').execute(), []);
  });

  it('reports the first bad line when batches after it are written and a later line is bad too', async (t) => {
    const { db, run } = await setup(t);
    await run([company(1), company(2), employee(2, 2)], 'existing.ndjson');
    const before = await snapshotDatabase(db);
    // Batches of 500 records: the conflict (line 700) is in the second, which may still be
    // being written, with the third, when the bad line (1601) is read.
    const employees = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => employee(1, from + i));
    const records = [
      ...employees(1000, 699),
      employee(1, 2),
      ...employees(2000, 900),
      { ...employee(1, 5), email: undefined },
    ];
    await assert.rejects(run(records, 'bad.ndjson'), (error: unknown) => {
      assert.ok(error instanceof ImportError, String(error));
      assert.match(
        error.message,
        /^line 700: company_id: employee 2 already belongs to company 2$/,
      );
      return true;
    });
    assert.deepEqual(await snapshotDatabase(db), before);
  });

  it('takes texts up to their limits in characters: an emoji is one', async (t) => {
    const { db, run } = await setup(t);
    await run([
      company(1),
      employee(1, 1, { first_name: '😀'.repeat(255), employee_number: '𝟘'.repeat(50) }),
      category(1, 1),
      expense(1, 1, 1, 1, { title: 'é'.repeat(255), description: '😀'.repeat(5000) }),
    ]);
    const employeeRow = await db.selectFrom('employees').selectAll().executeTakeFirstOrThrow();
    assert.equal(employeeRow.first_name, '😀'.repeat(255));
    assert.equal(employeeRow.employee_number, '𝟘'.repeat(50));
    const expenseRow = await db.selectFrom('expenses').selectAll().executeTakeFirstOrThrow();
    assert.equal(expenseRow.description, '😀'.repeat(5000));
  });

  it('reports a bad record before a later line that cannot be read at all', async (t) => {
    const { db, dir, importAt } = await setup(t);
    await importAt(writeNdjson(dir, [company(1)], 'existing.ndjson'));
    const before = await snapshotDatabase(db);
    // Lines 3 and 4 are read in the same chunk; line 4's bytes are not UTF-8 (or not JSON, or
    // too long), but line 3 is the file's first problem.
    const bad = { ...employee(1, 3), email: 'not-an-email' };
    for (const unreadable of [
      rawBytesIn(employee(1, 4, { first_name: 'A@@' }), 0xff),
      Buffer.from('{"type":"employee",'),
      Buffer.from(JSON.stringify(company(3, { name: 'x'.repeat(MAX_LINE_BYTES) }))),
    ]) {
      const file = join(dir, 'bad.ndjson');
      const lines = [company(1), employee(1, 2), bad].map((r) => Buffer.from(JSON.stringify(r)));
      writeFileSync(
        file,
        Buffer.concat([...lines, unreadable].flatMap((l) => [l, Buffer.from('\n')])),
      );
      await assert.rejects(importAt(file), (error: unknown) => {
        assert.ok(error instanceof ImportError, String(error));
        assert.match(error.message, /^line 3: email: /);
        return true;
      });
    }
    assert.deepEqual(await snapshotDatabase(db), before);
  });

  it('names the owner of a record that a delete line of another company names, stored or earlier in the file', async (t) => {
    const { run } = await setup(t);
    const removal = { type: 'delete', resource: 'employee', company_id: 1, id: 11 };
    const message = 'line 4: company_id: employee 11 already belongs to company 2';
    await assert.rejects(run([company(1), company(2), employee(2, 11), removal]), { message });
    await run([company(1), company(2), employee(2, 11)]);
    await assert.rejects(run([company(1), company(2), employee(2, 12), removal]), { message });
  });

  it('accepts children whose parents were imported by an earlier file', async (t) => {
    const { db, run } = await setup(t);
    await run(smallCompany(1, 0).slice(0, 3), 'parents.ndjson');
    await run([leave(1, 2, 1, 1)], 'children.ndjson');
    assert.equal((await db.selectFrom('leaves').select('id').execute()).length, 1);
  });

  it('stores each receipt original and its processed variant, and removes replaced ones', async (t) => {
    const { db, dir, receiptsDir, run } = await setup(t);
    await writeJpeg(dir, 'first.jpg', 40, 30);
    await writeJpeg(dir, 'second.jpg', 50, 30);
    const base = smallCompany(1, 0)
      .slice(0, 2)
      .concat([category(1, 1)]);
    await run([...base, expense(1, 1, 1, 1, { receipt: { original: 'first.jpg' } })]);
    const firstFiles = listFiles(receiptsDir);
    const [original, processed] = firstFiles;
    assert.match(original ?? '', /^1\/originals\/([0-9a-f]{64})\.jpg$/);
    assert.equal(processed, original?.replace('/originals/', '/processed/'));
    const receipt = await db.selectFrom('receipts').selectAll().executeTakeFirstOrThrow();
    assert.equal(receipt.original_content_type, 'image/jpeg');
    assert.equal(receipt.original_key, original);
    assert.equal(receipt.processed_key, processed);

    await run([expense(1, 1, 1, 1, { receipt: { original: 'second.jpg' } })]);
    const files = listFiles(receiptsDir);
    assert.equal(files.length, 2);
    assert.ok(files.every((file) => !firstFiles.includes(file)));

    await run([expense(1, 1, 1, 1, { receipt: null })]);
    assert.deepEqual(listFiles(receiptsDir), []);
    assert.equal((await db.selectFrom('receipts').select('expense_id').execute()).length, 0);
  });

  it('removes the receipt of a record that a later line of the same file replaces', async (t) => {
    const { db, dir, receiptsDir, run } = await setup(t);
    await writeJpeg(dir, 'first.jpg', 40, 30);
    await writeJpeg(dir, 'second.jpg', 50, 30);
    const base = [...smallCompany(1, 0).slice(0, 2), category(1, 1)];
    const withReceipt = (original: string) => expense(1, 1, 1, 1, { receipt: { original } });
    await run([...base, withReceipt('first.jpg'), expense(1, 1, 1, 1, { receipt: null })]);
    assert.deepEqual(listFiles(receiptsDir), []);
    await run([...base, withReceipt('first.jpg'), withReceipt('second.jpg')], 'swap.ndjson');
    const receipt = await db.selectFrom('receipts').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual(listFiles(receiptsDir), [receipt.original_key, receipt.processed_key]);
    // The same image twice: kept.
    await run([withReceipt('first.jpg'), withReceipt('first.jpg')], 'twice.ndjson');
    const again = await db.selectFrom('receipts').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual(listFiles(receiptsDir), [again.original_key, again.processed_key]);
  });

  it('follows links that stay inside the folder: to a receipt, to a folder, to the folder itself', async (t) => {
    const { db, dir, importAt } = await setup(t);
    // The real folder: a receipt, a folder of scans, and links to both inside it.
    const real = join(dir, 'real');
    mkdirSync(join(real, 'scans', '2026'), { recursive: true });
    const original = await writeJpeg(join(real, 'scans', '2026'), 'taxi.jpg');
    symlinkSync(original, join(real, 'taxi.jpg'));
    symlinkSync(join(real, 'scans', '2026'), join(real, 'latest'));
    const records = [
      ...smallCompany(1, 0).slice(0, 2),
      category(1, 1),
      expense(1, 1, 1, 1, { receipt: { original: 'taxi.jpg' } }),
      expense(1, 2, 1, 1, { receipt: { original: 'latest/taxi.jpg' } }),
      expense(1, 3, 1, 1, { receipt: { original: 'scans/2026/taxi.jpg' } }),
    ];
    writeNdjson(real, records, 'export.ndjson');
    // The import folder reached through a link, as /data/import → /mnt/exports/2026-03.
    symlinkSync(real, join(dir, 'today'));
    const summary = await importAt(join(dir, 'today', 'export.ndjson'));
    assert.equal(summary.receipts, 3);
    const receipts = await db
      .selectFrom('receipts')
      .select(['expense_id', 'original_sha256'])
      .execute();
    assert.equal(receipts.length, 3);
    assert.equal(new Set(receipts.map((r) => r.original_sha256)).size, 1);

    // A linked NDJSON file: receipt paths start at the folder of the path given (the link's),
    // not at its target's.
    writeNdjson(real, [expense(1, 1, 1, 1, { receipt: { original: 'taxi.jpg' } })], 'one.ndjson');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    await writeJpeg(elsewhere, 'taxi.jpg', 20, 10);
    symlinkSync(join(real, 'one.ndjson'), join(elsewhere, 'linked.ndjson'));
    await importAt(join(elsewhere, 'linked.ndjson'));
    const first = await db
      .selectFrom('receipts')
      .select('original_sha256')
      .where('expense_id', '=', 1)
      .executeTakeFirstOrThrow();
    assert.notEqual(
      first.original_sha256,
      receipts[0]?.original_sha256,
      'the file beside the link',
    );
  });

  if (dialect === 'postgres') {
    it('leaves the tables analysed and vacuumed, ready for index-only scans', async (t) => {
      const { db, run } = await setup(t);
      await run([...smallCompany(1, 0), ...smallCompany(2, 100)]);
      const { rows } = await sql<{ relname: string; all_visible: boolean; analysed: boolean }>`
        select c.relname, c.relallvisible = c.relpages and c.relpages > 0 as all_visible,
               s.last_analyze is not null as analysed
        from pg_class c join pg_stat_user_tables s on s.relid = c.oid
        where c.relname in ('employees', 'leaves', 'expenses') order by c.relname`.execute(db);
      assert.deepEqual(rows, [
        { relname: 'employees', all_visible: true, analysed: true },
        { relname: 'expenses', all_visible: true, analysed: true },
        { relname: 'leaves', all_visible: true, analysed: true },
      ]);
    });
  }

  it('builds the indexes of the tables a first load fills after their rows, and leaves them as they were when it fails', async (t) => {
    const { db, run } = await setup(t);
    const schema = await snapshotSchema(db, dialect);
    const records = [
      ...smallCompany(1, 0),
      employee(1, 2, { first_name: 'Jürgen', last_name: 'Groß' }),
      expense(1, 2, 2, 1, { title: 'Hotel Lübeck', merchant_name: 'Maritim' }),
    ];
    await assert.rejects(run([...records, { type: 'salary' }], 'bad.ndjson'), ImportError);
    assert.deepEqual(await snapshotSchema(db, dialect), schema);
    assert.deepEqual(await db.selectFrom('expenses').select('id').execute(), []);

    await run(records);
    assert.deepEqual(await snapshotSchema(db, dialect), schema);
    if (dialect === 'sqlite') {
      // The trigram search tables were filled from the rows in one pass.
      const match = async (table: string, term: string) =>
        (
          await sql<{ rowid: number }>`select rowid from ${sql.table(table)}
            where ${sql.table(table)} match ${`"${term}"`}`.execute(db)
        ).rows.map((row) => row.rowid);
      assert.deepEqual(await match('expenses_search', 'lubeck'), [2]);
      assert.deepEqual(await match('employees_search', 'jurgen'), [2]);
      // In one segment, with FTS5's own settings back for the imports that add rows one by one.
      for (const table of ['expenses_search', 'employees_search']) {
        assert.equal(await segmentsOf(db, table), 1, table);
        assert.deepEqual(await settingsOf(db, table), { ...FTS_DEFAULTS }, table);
      }
    }
    // A later import into the filled tables keeps indexes and search in step row by row.
    await run([
      employee(1, 3, { first_name: 'Zoë', last_name: 'Ünal' }),
      expense(1, 2, 2, 1, { title: 'Taxi Köln' }),
    ]);
    assert.deepEqual(await snapshotSchema(db, dialect), schema);
    if (dialect === 'sqlite') {
      const { rows } = await sql<{ rowid: number }>`select rowid from expenses_search
        where expenses_search match '"koln"' or expenses_search match '"lubeck"'`.execute(db);
      assert.deepEqual(rows, [{ rowid: 2 }]);
    }
  });

  it('says each step after the last record as it starts: a first load’s indexes table by table, then the rest of the commit', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const store = new FileReceiptStore(join(dir, 'store'));
    const steps: CommitStep[] = [];
    const importRecords = (records: unknown[]) =>
      importFile(handle, store, writeNdjson(dir, records), {
        ...options,
        onStep: (step) => steps.push(step),
      });
    const commit: CommitStep[] = [
      { name: 'feed' },
      { name: 'summaries' },
      { name: 'commit' },
      { name: 'samples' },
      { name: 'statistics' },
    ];
    // A writer thread may still be copying its write-ahead log once the rest is done.
    const said = () => {
      const last = steps.at(-1);
      if (last?.name !== 'checkpoint') return steps;
      assert.ok(options.writerThread, 'only a writer thread copies after the commit');
      return steps.slice(0, -1);
    };
    // Only SQLite has search tables of their own (PostgreSQL's trigram indexes are indexes).
    const search = (table: string): CommitStep[] =>
      dialect === 'sqlite' ? [{ name: 'search', table }] : [];

    // A table the import leaves empty (the leaves here) has its indexes back unannounced.
    const noLeaves = smallCompany(1, 0).filter((record) => record.type !== 'leave');
    await importRecords([...noLeaves, employee(1, 2), expense(1, 2, 2, 1)]);
    assert.deepEqual(said(), [
      ...search('employees'),
      { name: 'indexes', table: 'employees' },
      ...search('expenses'),
      { name: 'indexes', table: 'expenses' },
      ...commit,
    ]);

    // Into filled tables the indexes are kept up row by row: nothing to build at the end.
    steps.length = 0;
    await importRecords([employee(1, 3)]);
    assert.deepEqual(said(), commit);
  });

  describe('rejects a bad line with its number and field, and changes nothing', () => {
    const existing = [
      ...smallCompany(1, 0),
      company(2),
      employee(2, 2),
      category(2, 2),
      leaveType(2, 2),
    ];
    const cases: Array<{
      name: string;
      /** A record, a line as text, or a line as raw bytes (a Buffer). */
      line: unknown;
      expect: RegExp;
      files?: Record<string, string>;
      /** Lays out files and links; `outside` is a folder beside the import folder. */
      prepare?: (dir: string, outside: string) => Promise<unknown> | undefined;
    }> = [
      {
        name: 'invalid JSON',
        line: '{"type":"company",',
        expect: /^line 4: \(line\): is not valid JSON/,
      },
      {
        name: 'a timestamp whose offset takes it out of the years 0001–9999',
        line: employee(1, 5, { updated_at: '0001-01-01T00:00:00+01:00' }),
        expect:
          /^line 4: updated_at: must fall within the years 0001–9999 in UTC \(it is 0000-12-31T23:00:00Z\)$/,
      },
      {
        name: 'a text over its limit',
        line: employee(1, 5, { first_name: 'x'.repeat(256) }),
        expect: /^line 4: first_name: must be at most 255 characters$/,
      },
      {
        name: 'a text over its limit, counted in characters, not UTF-16 units',
        line: expense(1, 5, 1, 1, { description: '😀'.repeat(5001) }),
        expect: /^line 4: description: must be at most 5000 characters$/,
      },
      {
        name: 'not an object',
        line: '[1,2]',
        expect: /^line 4: \(record\): must be a JSON object$/,
      },
      {
        name: 'unknown type',
        line: { type: 'salary' },
        expect: /^line 4: type: must be one of company, /,
      },
      {
        name: 'missing field',
        line: { ...employee(1, 5), email: undefined },
        expect: /^line 4: email: is required$/,
      },
      {
        name: 'wrong type',
        line: employee(1, 5, { id: '5' }),
        expect:
          /^line 4: id: must be a positive integer of at most 9007199254740991 \(2\^53 − 1\)$/,
      },
      {
        name: 'id past 2^53 − 1',
        line: JSON.stringify(employee(1, 5)).replace('"id":5,', '"id":9007199254740992,'),
        expect:
          /^line 4: id: must be a positive integer of at most 9007199254740991 \(2\^53 − 1\)$/,
      },
      {
        name: 'non-positive id',
        line: employee(1, 0),
        expect:
          /^line 4: id: must be a positive integer of at most 9007199254740991 \(2\^53 − 1\)$/,
      },
      {
        name: 'bad enum',
        line: employee(1, 5, { status: 'retired' }),
        expect: /^line 4: status: must be one of active, inactive, terminated$/,
      },
      {
        name: 'impossible date',
        line: employee(1, 5, { hire_date: '2026-02-30' }),
        expect: /^line 4: hire_date: must be a real calendar date/,
      },
      {
        name: 'timestamp without offset',
        line: leave(1, 5, 1, 1, { created_at: '2026-02-19T08:00:00' }),
        expect: /^line 4: created_at: must be an RFC 3339 timestamp/,
      },
      {
        name: 'end before start',
        line: leave(1, 5, 1, 1, { end_date: '2026-03-01' }),
        expect: /^line 4: end_date: must not be before start_date$/,
      },
      {
        name: 'hourly without times',
        line: leave(1, 5, 1, 1, { duration_type: 'hourly' }),
        expect: /^line 4: start_time: must not be null$/,
      },
      {
        name: 'times on a full day',
        line: leave(1, 5, 1, 1, { hours: 4 }),
        expect: /^line 4: hours: must be null unless duration_type is hourly$/,
      },
      {
        name: 'bad money',
        line: expense(1, 5, 1, 1, { amount: '12,50' }),
        expect:
          /^line 4: amount: is not a plain decimal number \(digits, a point and digits: 1250\.50\)$/,
      },
      {
        // An error names the field, never its value: a salary written the local way.
        name: 'a salary with a decimal comma',
        line: employee(1, 5, { salary: '85.000,00' }),
        expect: /^line 4: salary: is not a plain decimal number [^8]*$/,
      },
      {
        name: 'invalid JSON around a salary, without the text around the fault',
        line: '{"type":"employee","iban":"TR330006100519786457841326","salary":SECRET85000}',
        expect: /^line 4: \(line\): is not valid JSON \(an unexpected character\)$/,
      },
      {
        name: 'invalid JSON with a position',
        line: '{"type":"employee","salary":"85000" "iban":"TR33"}',
        expect:
          /^line 4: \(line\): is not valid JSON \(Expected ',' or '}' after property value at column 37\)$/,
      },
      {
        name: 'money past the bound, written as a decimal string with its zeros',
        line: employee(1, 5, { salary: '000100000000000.0000000000000' }),
        expect: /^line 4: salary: is too large$/,
      },
      {
        name: 'money with more places than it takes, as a string',
        line: employee(1, 5, { salary: '1.0000000000001' }),
        expect: /^line 4: salary: has more than 4 decimal places$/,
      },
      {
        name: 'a JSON number with more places than the currency, as its writer printed it',
        line: expense(1, 5, 1, 1, { amount: 0.30000000000000004, items: [] }),
        expect: /^line 4: amount: has more than 2 decimal places$/,
      },
      {
        name: 'a JSON number in exponent form, too fine',
        line: expense(1, 5, 1, 1, { amount: 1e-7, items: [] }),
        expect: /^line 4: amount: has more than 2 decimal places$/,
      },
      {
        name: 'a JSON number in exponent form, too large',
        line: employee(1, 5, { salary: 1.2345678901234568e29 }),
        expect: /^line 4: salary: is too large$/,
      },
      {
        name: 'negative money',
        line: expense(1, 5, 1, 1, { amount: '-1.00' }),
        expect: /^line 4: amount: must not be negative$/,
      },
      {
        name: 'zero with a minus sign',
        line: expense(1, 5, 1, 1, { amount: '-0.00' }),
        expect: /^line 4: amount: must not be written with a minus sign$/,
      },
      {
        name: 'a JSON -0',
        // As text: JSON.stringify writes -0 as 0.
        line: JSON.stringify(expense(1, 5, 1, 1, { amount: 0 })).replace(
          '"amount":0',
          '"amount":-0',
        ),
        expect: /^line 4: amount: must not be written with a minus sign$/,
      },
      {
        name: 'decimals beyond the currency',
        line: expense(1, 5, 1, 1, { currency: 'JPY', amount: '1500.5', items: [] }),
        expect: /^line 4: amount: has more than 0 decimal places$/,
      },
      {
        name: 'bad item price',
        line: expense(1, 5, 1, 1, { items: [{ name: 'x', quantity: 1, price: 'free' }] }),
        expect: /^line 4: items\[0\]\.price: /,
      },
      {
        name: 'bad attachment',
        line: leave(1, 5, 1, 1, { document: { attachments: [{}] } }),
        expect: /^line 4: document\.attachments\[0\]\.file_name: is required$/,
      },
      {
        name: 'bad time zone',
        line: company(3, { timezone: 'Mars/Olympus' }),
        expect: /^line 4: timezone: is not an IANA time-zone name$/,
      },
      {
        name: 'an offset, which Intl takes as a time zone but IANA does not name',
        line: company(3, { timezone: '+03:00' }),
        expect: /^line 4: timezone: is not an IANA time-zone name$/,
      },
      {
        name: 'unknown company',
        line: employee(9, 5),
        expect: /^line 4: company_id: company 9 not found/,
      },
      {
        name: 'child before parent',
        line: leave(1, 5, 77, 1),
        expect:
          /^line 4: employee_id: employee 77 not found \(parents must come before children\)$/,
      },
      {
        name: 'reference to another company',
        line: leave(1, 5, 2, 1),
        expect: /^line 4: employee_id: employee 2 belongs to another company$/,
      },
      {
        name: 'category of another company',
        line: expense(1, 5, 1, 2),
        expect: /^line 4: category_id: expense_category 2 belongs to another company$/,
      },
      {
        name: 'substitute of another company',
        line: leave(1, 5, 1, 1, { substitute_employee_id: 2 }),
        expect: /^line 4: substitute_employee_id: employee 2 belongs to another company$/,
      },
      {
        name: 'id owned by another company',
        line: employee(1, 2),
        expect: /^line 4: company_id: employee 2 already belongs to company 2$/,
      },
      {
        name: 'leave id owned by another company',
        line: leave(2, 1, 2, 2),
        expect: /^line 4: company_id: leave 1 already belongs to company 1$/,
      },
      {
        name: 'missing receipt file',
        line: expense(1, 5, 1, 1, { receipt: { original: 'nope.jpg' } }),
        expect: /^line 4: receipt\.original: file nope\.jpg not found$/,
      },
      {
        name: 'receipt outside the folder',
        line: expense(1, 5, 1, 1, { receipt: { original: '../outside.jpg' } }),
        expect: /^line 4: receipt\.original: must be a path inside the import file’s folder$/,
      },
      {
        name: 'receipt that links to a file outside the folder',
        line: expense(1, 5, 1, 1, { receipt: { original: 'scan.jpg' } }),
        prepare: async (dir, outside) => {
          symlinkSync(await writeJpeg(outside, 'secret.jpg'), join(dir, 'scan.jpg'));
        },
        expect:
          /^line 4: receipt\.original: scan\.jpg leads to a file outside the import file’s folder$/,
      },
      {
        name: 'receipt in a linked folder outside the folder',
        line: expense(1, 5, 1, 1, { receipt: { original: 'scans/secret.jpg' } }),
        prepare: async (dir, outside) => {
          await writeJpeg(outside, 'secret.jpg');
          symlinkSync(outside, join(dir, 'scans'));
        },
        expect:
          /^line 4: receipt\.original: scans\/secret\.jpg leads to a file outside the import file’s folder$/,
      },
      {
        name: 'receipt that is a dangling link',
        line: expense(1, 5, 1, 1, { receipt: { original: 'gone.jpg' } }),
        prepare: (dir, outside) => {
          symlinkSync(join(outside, 'never-written.jpg'), join(dir, 'gone.jpg'));
          return undefined;
        },
        expect: /^line 4: receipt\.original: file gone\.jpg not found$/,
      },
      {
        name: 'receipt that is a FIFO, not a file',
        line: expense(1, 5, 1, 1, { receipt: { original: 'pipe.jpg' } }),
        prepare: (dir) => {
          execFileSync('mkfifo', [join(dir, 'pipe.jpg')]);
          return undefined;
        },
        expect:
          /^line 4: receipt\.original: pipe\.jpg is not a file \(a directory, FIFO or device\)$/,
      },
      {
        name: 'receipt that is a directory',
        line: expense(1, 5, 1, 1, { receipt: { original: 'scans' } }),
        prepare: (dir) => {
          mkdirSync(join(dir, 'scans'));
          return undefined;
        },
        expect: /^line 4: receipt\.original: scans is not a file \(a directory, FIFO or device\)$/,
      },
      {
        name: 'receipt that is a loop of links',
        line: expense(1, 5, 1, 1, { receipt: { original: 'loop1.jpg' } }),
        prepare: (dir) => {
          symlinkSync('loop2.jpg', join(dir, 'loop1.jpg'));
          symlinkSync('loop1.jpg', join(dir, 'loop2.jpg'));
          return undefined;
        },
        expect: /^line 4: receipt\.original: loop1\.jpg is a loop of symbolic links$/,
      },
      {
        name: 'receipt path that ends in a slash',
        line: expense(1, 5, 1, 1, { receipt: { original: 'scan.jpg/' } }),
        prepare: async (dir) => {
          await writeJpeg(dir, 'scan.jpg');
        },
        expect:
          /^line 4: receipt\.original: scan\.jpg\/ goes through a file as if it were a folder$/,
      },
      {
        name: 'receipt path through a folder that is not there',
        line: expense(1, 5, 1, 1, { receipt: { original: 'nowhere/../scan.jpg' } }),
        prepare: async (dir) => {
          await writeJpeg(dir, 'scan.jpg');
        },
        expect: /^line 4: receipt\.original: file nowhere\/\.\.\/scan\.jpg not found$/,
      },
      {
        name: 'receipt larger than 25 MiB',
        line: expense(1, 5, 1, 1, { receipt: { original: 'huge.jpg' } }),
        prepare: (dir) => {
          writeFileSync(join(dir, 'huge.jpg'), Buffer.alloc(25 * 1024 * 1024 + 1));
          return undefined;
        },
        expect: /^line 4: receipt\.original: huge\.jpg is larger than 25 MiB \(26,214,400 bytes\)$/,
      },
      {
        name: 'bytes that are not UTF-8 (FF FE)',
        line: rawBytesIn(expense(1, 5, 1, 1, { title: '@@' }), 0xff, 0xfe),
        expect: /^line 4: title: not valid UTF-8 text$/,
      },
      {
        name: 'an overlong UTF-8 sequence (C0 AF)',
        line: rawBytesIn(employee(1, 5, { last_name: 'a@@b' }), 0xc0, 0xaf),
        expect: /^line 4: last_name: not valid UTF-8 text$/,
      },
      {
        name: 'a surrogate encoded in UTF-8 (ED A0 80)',
        line: rawBytesIn(leave(1, 5, 1, 1, { reason: '@@' }), 0xed, 0xa0, 0x80),
        expect: /^line 4: reason: not valid UTF-8 text$/,
      },
      {
        name: 'a lone surrogate escape',
        line: JSON.stringify(
          expense(1, 5, 1, 1, { items: [{ name: '@@', quantity: 1, price: '1.00' }] }),
        ).replace('@@', '\\ud800'),
        expect: /^line 4: items\[0\]\.name: not valid UTF-8 text$/,
      },
      {
        name: 'a line over 1 MiB',
        line: JSON.stringify(company(3, { name: 'x'.repeat(MAX_LINE_BYTES) })),
        expect: /^line 4: \(line\): is longer than 1048576 bytes \(1 MiB\)$/,
      },
      {
        name: 'receipt that is not an image',
        line: expense(1, 5, 1, 1, { receipt: { original: 'fake.jpg' } }),
        files: { 'fake.jpg': 'not really a jpeg, just text' },
        expect:
          /^line 4: receipt\.original: fake\.jpg is not a JPEG, PNG, WebP, HEIC, AVIF or TIFF image$/,
      },
    ];

    // Every case imports into the same database, each from a folder of its own: a case that
    // changed nothing leaves the next one the same database (a database and its first import
    // for each of the cases made this block a fifth of the suite's time on the writer thread).
    const cleanups: Array<() => unknown> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });
    let shared: Awaited<ReturnType<typeof setup>>;
    before(async () => {
      shared = await setup({ after: (cleanup) => cleanups.push(cleanup) });
      await writeJpeg(shared.dir, 'good.jpg');
      await shared.run(
        [...existing, expense(1, 2, 1, 1, { receipt: { original: 'good.jpg' } })],
        'existing.ndjson',
      );
    });

    cases.forEach((c, index) => {
      it(c.name, async (t) => {
        const { db, receiptsDir, importAt } = shared;
        const dir = join(shared.dir, `case-${index}`);
        mkdirSync(dir);
        for (const [name, content] of Object.entries(c.files ?? {}))
          writeFileSync(join(dir, name), content);
        await c.prepare?.(dir, useTempDir(t));
        const unchanged = await snapshotDatabase(db);
        const filesBefore = listFiles(receiptsDir);
        // Valid changes before and after the bad line: none of them may survive.
        await writeJpeg(dir, 'new.jpg', 64, 64);
        const records = [
          employee(1, 1, { first_name: 'Changed' }),
          expense(1, 3, 1, 1, { receipt: { original: 'new.jpg' } }),
          company(1, { active: false }),
          c.line,
          employee(1, 6),
        ];
        await assert.rejects(importAt(writeNdjson(dir, records)), (error: unknown) => {
          assert.ok(error instanceof ImportError, String(error));
          assert.match(error.message, c.expect);
          return true;
        });
        assert.deepEqual(await snapshotDatabase(db), unchanged);
        assert.deepEqual(listFiles(receiptsDir), filesBefore);
      });
    });
  });
}

/** An employee, a category and one expense (ids from 100) for each money value and currency. */
function expensesOf(
  values: Array<[string | number, string]>,
  fields: (value: string | number, currency: string) => Record<string, unknown>,
): unknown[] {
  return [
    ...smallCompany(1, 0).slice(0, 2),
    category(1, 1),
    ...values.map(([value, currency], i) => expense(1, 100 + i, 1, 1, fields(value, currency))),
  ];
}

/** A record as its JSON line, with `bytes` written raw where one of its strings says `@@`. */
function rawBytesIn(record: unknown, ...bytes: number[]): Buffer {
  const [before, after] = JSON.stringify(record).split('@@') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
}

/**
 * Children are replaced with their parent, so their serial ids change; their content must
 * not. Every import moves the data version of the companies it touches (tested on its own).
 */
function withoutSerialIds(snapshot: Record<string, unknown[]>) {
  const strip = (rows: unknown[] = []) =>
    rows.map((row) => ({ ...(row as object), id: undefined }));
  return {
    ...snapshot,
    companies: (snapshot.companies ?? []).map((row) => ({
      ...(row as object),
      data_version: undefined,
    })),
    leave_attachments: strip(snapshot.leave_attachments),
    expense_items: strip(snapshot.expense_items),
  };
}
