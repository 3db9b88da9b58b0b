import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { COMPANY_TABLES, purgeCompany } from '../../src/companies/purge.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useApi } from '../helpers/api.ts';
import { cdapi, cdapiJson } from '../helpers/cli.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import {
  company,
  employee,
  expense,
  smallCompany,
  writeJpeg,
  writeNdjson,
} from '../helpers/records.ts';

const filesIn = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

describeEachDialect('cdapi companies purge', (dialect) => {
  it('removes the company with its records, keys and receipt files, and nothing of another', async (t) => {
    const database = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const receipts = join(dir, 'receipts');
    const env = { DATABASE_URL: database.url, RECEIPTS_DIR: receipts };
    await writeJpeg(dir, 'one.jpg');
    await writeJpeg(dir, 'two.jpg', 50, 40);
    const file = writeNdjson(dir, [
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'one.jpg' } }),
      ...smallCompany(2, 100),
      expense(2, 102, 101, 101, { receipt: { original: 'two.jpg' } }),
    ]);
    assert.equal(cdapi(['import', file], env).status, 0);
    cdapiJson(['keys', 'create', '--company', '1', '--name', 'a'], env);
    cdapiJson(['keys', 'create', '--company', '2', '--name', 'b'], env);
    const before = filesIn(receipts);
    assert.equal(before.length, 4);

    const refused = cdapi(['companies', 'purge', '1', '--confirm', '2'], env);
    assert.equal(refused.status, 1);
    assert.equal(refused.stderr, 'cdapi: --confirm must repeat the company id (1) to purge it\n');
    assert.equal(cdapi(['companies', 'purge', '1'], env).status, 1);

    const summary = cdapiJson(['companies', 'purge', '1', '--confirm', '1'], env);
    assert.deepEqual(summary, {
      company: { id: 1, name: 'Company 1' },
      removed: {
        employees: 1,
        leave_types: 1,
        leaves: 1,
        expense_categories: 1,
        expenses: 2,
        receipt_files: 2,
        api_keys: 1,
      },
      receipt_files_left: [],
      deleted_values_in_wal: false,
    });
    const { db } = database.handle;
    for (const table of COMPANY_TABLES) {
      const rows = await db.selectFrom(table).select('company_id').execute();
      assert.ok(
        rows.every((row) => Number(row.company_id) === 2),
        `${table} holds nothing of company 1`,
      );
    }
    assert.equal((await db.selectFrom('companies').select('id').execute()).length, 1);
    assert.equal(filesIn(receipts).length, 2);
    assert.deepEqual(readdirSync(receipts), ['2'], "company 1's folders went with its files");
    const text = cdapi(['companies', 'purge', '2', '--confirm', '2'], env);
    assert.equal(text.status, 0, text.stderr);
    assert.match(
      text.stdout,
      /^Purged company 2 \(Company 2\):\n {2}1 employee, 1 leave type, 1 leave,\n {2}1 expense category, 2 expenses,\n {2}2 receipt files, 1 API key\.\n$/,
    );
    assert.equal(filesIn(receipts).length, 0);
    assert.deepEqual(readdirSync(receipts), [], 'the store itself stays');
    const again = cdapi(['companies', 'purge', '2', '--confirm', '2'], env);
    assert.equal(again.stderr, 'cdapi: company 2 not found\n');
  });

  it('purges the rows when a receipt file cannot be removed, and names the files left', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await writeJpeg(api.dir, 'one.jpg');
    await api.load([
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'one.jpg' } }),
    ]);
    const before = filesIn(api.config.receiptsDir);
    assert.equal(before.length, 2);
    // A read-only store, as a folder mounted read-only answers.
    class ReadOnlyStore extends FileReceiptStore {
      override async delete(): Promise<void> {
        throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
      }
    }
    const summary = await purgeCompany(api.handle, new ReadOnlyStore(api.config.receiptsDir), 1);
    assert.equal(summary?.removed.receipt_files, 0);
    assert.deepEqual(
      summary?.receipt_files_left.map((file) => file.reason),
      ['EROFS', 'EROFS'],
    );
    assert.deepEqual(
      summary?.receipt_files_left.map((file) => join(api.config.receiptsDir, file.path)).sort(),
      before.sort(),
    );
    assert.equal((await api.handle.db.selectFrom('companies').select('id').execute()).length, 0);
  });

  it('refuses the purged company’s keys at once on a running service, and answers 404 after', async (t) => {
    const api = await useApi(t, dialect, {
      records: [...smallCompany(1, 0), ...smallCompany(2, 100)],
    });
    const key = await api.createKey(1);
    const other = await api.createKey(2);
    assert.equal((await api.get('/employees', key)).status, 200);
    await purgeCompany(api.handle, new FileReceiptStore(api.config.receiptsDir), 1);
    // The key cache keeps a look-up for at most a second: polled until then, never more.
    let status = 200;
    for (let tries = 0; tries < 50 && status !== 401; tries++) {
      status = (await api.get('/employees', key)).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 401);
    assert.equal((await api.get('/employees/101', other)).status, 200);
  });

  it('serves a company imported again under a purged id nothing kept or read of the purged one', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const store = new FileReceiptStore(api.config.receiptsDir);
    const names = (res: { json: { data: Array<{ full_name: string }> } }) =>
      res.json.data.map((e) => e.full_name);
    const key = await api.createKey(1);
    // Made twice: the response cache keeps the purged company's answer.
    const purgedNames = names(await api.get('/employees', key));
    assert.deepEqual(names(await api.get('/employees', key)), purgedNames);
    const cursor = (await api.get('/changes', key)).json.meta.next_cursor;
    for (const round of ['Anew', 'Again']) {
      await purgeCompany(api.handle, store, 1);
      await api.load([company(1), employee(1, 1, { first_name: round })]);
      const fresh = await api.createKey(1);
      assert.deepEqual(names(await api.get('/employees', fresh)), [`${round} Yılmaz`]);
      assert.deepEqual(
        names(await api.get('/employees', fresh)),
        [`${round} Yılmaz`],
        'and when kept',
      );
      const stale = await api.get(`/changes?after=${cursor}`, fresh);
      assert.equal(stale.status, 410, stale.body);
      assert.equal(stale.json.code, 'cursor_expired');
      const feed = (await api.get('/changes', fresh)).json;
      assert.deepEqual(
        feed.data.map((e: { change: string; resource: string; id: number }) => [
          e.change,
          e.resource,
          e.id,
        ]),
        [['upsert', 'employee', 1]],
      );
      const next = await api.get(`/changes?after=${feed.meta.next_cursor}`, fresh);
      assert.equal(next.status, 200, 'its own cursors read on');
      assert.deepEqual(next.json.data, []);
    }
  });
});
