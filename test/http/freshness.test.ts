import assert from 'node:assert/strict';
import { it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { API_PREFIX } from '../../src/http/deps.ts';
import { useApi } from '../helpers/api.ts';
import { companyVersions, describeEachDialect } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import { company, employee, expense, leave, leaveType, smallCompany } from '../helpers/records.ts';

const total = (res: { status: number; body: string; json: { meta: { total: number } } }) => {
  assert.equal(res.status, 200, res.body);
  return res.json.meta.total;
};

describeEachDialect('an answer read while an import commits', (dialect) => {
  it('is read again at the new version: never the old total with the new rows', async (t) => {
    const api = await useApi(t, dialect, { records: [], config: { responseCacheMb: 0 } });
    const ids = Array.from({ length: 60 }, (_, i) => i + 1);
    await api.load([
      company(1),
      employee(1, 1),
      leaveType(1, 1),
      ...ids.map((id) => leave(1, id, 1, 1)),
    ]);
    const key = await api.createKey(1);
    // The next request reads its version, then an import deleting every other leave commits
    // before its page is read: its total, cached at that version, says 60, its rows are 30.
    let importBeforeThePage = false;
    api.app.addHook('preHandler', async (request) => {
      if (!importBeforeThePage) return;
      importBeforeThePage = false;
      await request.dataVersion();
      await api.load(
        ids
          .filter((id) => id % 2 === 0)
          .map((id) => ({ type: 'delete', resource: 'leave', company_id: 1, id })),
      );
    });
    const path = '/leaves?sort=id&per_page=10&page=2';
    const before = await api.get(path, key);
    assert.equal(before.json.meta.total, 60);
    assert.deepEqual(
      before.json.data.map((row: { id: number }) => row.id),
      ids.slice(10, 20),
    );
    importBeforeThePage = true;
    const during = await api.get(path, key);
    assert.equal(during.status, 200, during.body);
    assert.equal(importBeforeThePage, false, 'the import ran before the page');
    const odd = ids.filter((id) => id % 2 === 1);
    assert.equal(during.json.meta.total, 30);
    assert.equal(during.json.meta.last_page, 3);
    assert.deepEqual(
      during.json.data.map((row: { id: number }) => row.id),
      odd.slice(10, 20),
    );
    assert.ok(
      api.logLines().some((line) => line.msg === 'data changed while the answer was read'),
      'read again',
    );
  });
});

describeEachDialect('cached list totals', (dialect) => {
  for (const responseCacheMb of [64, 0]) {
    it(`are never served after an import changed the company’s data (response cache ${responseCacheMb} MB)`, async (t) => {
      const api = await useApi(t, dialect, { records: [], config: { responseCacheMb } });
      await api.load([...smallCompany(1, 0), ...smallCompany(2, 100)]);
      const key = await api.createKey(1);
      const paths = [
        '/employees',
        '/leaves',
        '/expenses',
        '/leaves?per_page=1',
        '/expenses?sort=-amount',
      ];
      const totals = async () => {
        const found: number[] = [];
        for (const path of paths) found.push(total(await api.get(path, key)));
        return found;
      };
      const before = await totals();
      // Asked again: the same totals (now from the caches).
      assert.deepEqual(await totals(), before);

      // Another company's import leaves company 1's answers alone…
      await api.load([company(2), employee(2, 150)]);
      assert.deepEqual(await totals(), before);

      // …and company 1's own import is seen by the very next request.
      await api.load([company(1), employee(1, 50), leave(1, 50, 1, 1), expense(1, 50, 1, 1)]);
      assert.deepEqual(
        await totals(),
        before.map((n) => n + 1),
      );
      const detail = await api.get('/employees/50', key);
      assert.equal(detail.status, 200);
    });
  }

  it('sends a kept answer exactly as the first one, and compressed to a client that asks', async (t) => {
    const api = await useApi(t, dialect, { records: [], config: { responseCacheMb: 64 } });
    // Enough non-ASCII names that bytes and characters differ, and the body is compressed.
    await api.load([
      ...smallCompany(1, 0),
      ...Array.from({ length: 30 }, (_, i) =>
        employee(1, 10 + i, { first_name: 'Şükrü', last_name: `Öztürk-${i}` }),
      ),
    ]);
    const key = await api.createKey(1);
    const first = await api.get('/employees?per_page=100', key);
    const kept = await api.get('/employees?per_page=100', key);
    assert.equal(first.status, 200);
    assert.equal(kept.body, first.body);
    for (const header of ['content-type', 'content-length']) {
      assert.equal(kept.headers[header], first.headers[header], header);
    }
    assert.equal(Number(kept.headers['content-length']), Buffer.byteLength(first.body));
    const gzipped = await api.app.inject({
      url: `${API_PREFIX}/employees?per_page=100`,
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
    });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gzipped.rawPayload).toString(), first.body);
  });

  it('moves on the data version of each company an import touches, in the import, to a number it never had', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    const before = Date.now();
    await api.load([...smallCompany(1, 0), ...smallCompany(2, 100)]);
    const first = await companyVersions(api.handle.db);
    // The time of the import, in milliseconds (one more where that is not larger).
    for (const version of first.values()) assert.ok(version >= before, String(version));
    // Records of company 2 only (its company line is not repeated): only its version moves.
    await api.load([employee(2, 150)]);
    const second = await companyVersions(api.handle.db);
    assert.equal(second.get(1), first.get(1));
    assert.ok((second.get(2) ?? 0) > (first.get(2) ?? 0));
    // A failed import changes no version.
    await assert.rejects(api.load([employee(1, 160), { type: 'employee', company_id: 1 }]));
    assert.deepEqual(await companyVersions(api.handle.db), second);
    // Two imports within one millisecond still give two versions: one more where the clock
    // has not moved past the version (set ahead of it here).
    const ahead = Date.now() + 3_600_000;
    await api.handle.db
      .updateTable('companies')
      .set({ data_version: ahead })
      .where('id', '=', 2)
      .execute();
    await api.load([employee(2, 151)]);
    assert.equal((await companyVersions(api.handle.db)).get(2), ahead + 1);
  });

  it('never serves an answer kept before a restore once imports after it are made (restored under a running instance)', async (t) => {
    const api = await useApi(t, dialect, { records: [], config: { responseCacheMb: 64 } });
    await api.load(smallCompany(1, 0));
    const key = await api.createKey(1);
    const ids = async () =>
      (await api.get('/employees?per_page=100', key)).json.data.map((e: { id: number }) => e.id);
    const backup = {
      ids: await ids(),
      version: (await companyVersions(api.handle.db)).get(1) ?? 0,
    };
    // An import after the backup: its answer is kept under its version.
    await api.load([employee(1, 50)]);
    assert.deepEqual(
      await ids(),
      [...backup.ids, 50].sort((a, b) => a - b),
    );
    assert.deepEqual(
      await ids(),
      [...backup.ids, 50].sort((a, b) => a - b),
    );
    // The backup restored under the instance (its employees and its company row as they were)…
    await api.handle.db.deleteFrom('employees').where('id', '=', 50).execute();
    await api.handle.db
      .updateTable('companies')
      .set({ data_version: backup.version })
      .where('id', '=', 1)
      .execute();
    // …and another import: its answer, not the one kept for the lost import's version.
    await api.load([employee(1, 60)]);
    await eventually(
      async () => (await ids()).includes(60),
      'the answer made from the restored data and the import after it',
    );
    assert.deepEqual(
      await ids(),
      [...backup.ids, 60].sort((a, b) => a - b),
    );
  });
});

describeEachDialect('response cache', (dialect) => {
  it('answers from the cache while the data version stands, and from the database after', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    const names = async () =>
      (await api.get('/employees', key)).json.data.map((e: { full_name: string }) => e.full_name);
    const first = await names();
    // Made a second time, the answer is kept (the cache keeps what is asked for again).
    assert.deepEqual(await names(), first);
    // A change behind the importer's back (no new version) is not seen: the answer is kept…
    await api.handle.db.updateTable('employees').set({ full_name: 'Changed Quietly' }).execute();
    assert.deepEqual(await names(), first);
    // …until the version moves, as every import makes it. Moved by a statement, not by an
    // import of this process (which forgets its versions at its commit), PostgreSQL's new
    // version is read once its notification is heard (src/db/data-versions.ts).
    await api.handle.db
      .updateTable('companies')
      .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
      .execute();
    await eventually(
      async () => (await names())[0] === 'Changed Quietly',
      'the answer made again from the database',
    );
    assert.deepEqual(await names(), ['Changed Quietly']);
  });
});

describeEachDialect('response cache and compression', (dialect) => {
  it('never keeps a compressed answer for a client that did not ask for one', async (t) => {
    const api = await useApi(t, dialect, {
      records: [
        ...smallCompany(1, 0),
        ...Array.from({ length: 30 }, (_, i) =>
          employee(1, 10 + i, { first_name: 'Şükrü', last_name: `Öztürk-${i}` }),
        ),
      ],
    });
    const key = await api.createKey(1);
    const path = `${API_PREFIX}/employees?per_page=100`;
    const gzipped = () =>
      api.app.inject({
        url: path,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
      });
    const first = await gzipped();
    assert.equal(first.headers['content-encoding'], 'gzip');
    const json = gunzipSync(first.rawPayload).toString();
    for (let i = 0; i < 2; i++) {
      const plain = await api.get('/employees?per_page=100', key);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.body, json);
      assert.equal(Number(plain.headers['content-length']), Buffer.byteLength(json));
      const again = await gzipped();
      assert.equal(gunzipSync(again.rawPayload).toString(), json);
    }
  });
});

describeEachDialect('search indexes', (dialect) => {
  it('follow re-imported text, on both columns, for long and short terms', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    const found = async (path: string) =>
      (await api.get(path, key)).json.data.map((r: { id: number }) => r.id);
    await api.load([
      expense(1, 7, 1, 1, { title: 'Taxi to Ankara', merchant_name: 'BiTaksi' }),
      expense(1, 8, 1, 1, { title: 'Dinner', merchant_name: 'Çiya Sofrası' }),
    ]);
    assert.deepEqual(await found('/expenses?search=ankara'), [7]);
    assert.deepEqual(await found('/expenses?search=SOFRA'), [8]);
    assert.deepEqual(await found('/expenses?search=ciya s'), [8]);
    // Replaced by a later import: the old text is no longer found, the new one is.
    await api.load([expense(1, 7, 1, 1, { title: 'Lunch', merchant_name: 'Kebapçı' })]);
    assert.deepEqual(await found('/expenses?search=ankara'), []);
    assert.deepEqual(await found('/expenses?search=kebap'), [7]);
    // Two characters: below the trigram index, still found.
    assert.deepEqual(await found('/expenses?search=lu'), [7]);
    await api.load([employee(1, 9, { first_name: 'Gülşen', last_name: 'Öztürk' })]);
    assert.deepEqual(await found('/employees?search=ozturk'), [9]);
    await api.load([employee(1, 9, { first_name: 'Gülşen', last_name: 'Kaya' })]);
    assert.deepEqual(await found('/employees?search=ozturk'), []);
    assert.deepEqual(await found('/employees?search=kaya'), [9]);
  });
});
