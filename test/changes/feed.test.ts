import assert from 'node:assert/strict';
import { it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Migrator } from 'kysely';
import { FEED_RESOURCES } from '../../src/db/changes.queries.ts';
import { migrateDatabase, migrationProvider } from '../../src/db/migrate.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { feedRank } from '../../src/import/change-log.ts';
import { PARENT_TYPES, TENANT_RECORD_TYPES } from '../../src/resources/index.ts';
import { FEED_RESOURCE_NAMES } from '../../src/schemas/changes.ts';
import { EmployeeSummarySchema } from '../../src/schemas/common.ts';
import { EmployeeSchema } from '../../src/schemas/employees.ts';
import { ExpenseSchema } from '../../src/schemas/expenses.ts';
import { LeaveSchema } from '../../src/schemas/leaves.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { companyVersions, describeEachDialect } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  smallCompany,
  writeJpeg,
} from '../helpers/records.ts';

interface Entry {
  cursor: string;
  resource: string;
  id: number;
  change: 'upsert' | 'delete';
  changed_at: string;
  record: { id: number } | null;
}

/** Every entry after `after`, page by page. */
async function readAll(api: TestApi, key: string, after?: string, limit = 100) {
  const entries: Entry[] = [];
  let cursor = after;
  for (;;) {
    const query = new URLSearchParams({
      limit: String(limit),
      ...(cursor ? { after: cursor } : {}),
    });
    const res = await api.get(`/changes?${query}`, key);
    assert.equal(res.status, 200, res.body);
    entries.push(...res.json.data);
    cursor = res.json.meta.next_cursor;
    if (!res.json.meta.has_more) return { entries, cursor: cursor as string };
  }
}

it('the feed’s resources are the record types of a company, in the order its schema names them', () => {
  const types = TENANT_RECORD_TYPES.map((d) => [d.type, d.table]);
  assert.deepEqual(
    FEED_RESOURCES.map((r) => [r.name, r.table]),
    types,
  );
  assert.deepEqual(
    [...FEED_RESOURCE_NAMES],
    types.map(([type]) => type),
  );
  // A resource's place is its number in deleted_records, changes_forgotten and every cursor a
  // client keeps: the numbers given never change, a new record type takes the next one.
  assert.deepEqual(
    (['employee', 'leave_type', 'leave', 'expense_category', 'expense'] as const).map((type) => [
      type,
      feedRank(type),
    ]),
    [
      ['employee', 0],
      ['leave_type', 1],
      ['leave', 2],
      ['expense_category', 3],
      ['expense', 4],
    ],
  );
});

it('re-sends what embeds a record exactly when a column the API embeds changes', () => {
  const embedded = (schema: { properties: Record<string, unknown> }) =>
    Object.keys(schema.properties).filter((name) => name !== 'id');
  const byType = new Map(TENANT_RECORD_TYPES.map((d) => [d.type, [...d.embedded]]));
  assert.deepEqual(byType.get('employee'), embedded(EmployeeSummarySchema));
  assert.deepEqual(byType.get('leave_type'), embedded(LeaveSchema.properties.leave_type));
  assert.deepEqual(byType.get('expense_category'), embedded(ExpenseSchema.properties.category));
  for (const descriptor of TENANT_RECORD_TYPES) {
    if (!PARENT_TYPES.has(descriptor.type)) assert.deepEqual(descriptor.embedded, []);
  }
});

it('moves nothing for a change to the columns no answer contains, which no schema serves', () => {
  const unserved = new Map(TENANT_RECORD_TYPES.map((d) => [d.type, [...d.unserved]]));
  assert.deepEqual(unserved.get('employee'), ['national_id', 'salary_e4', 'iban', 'address']);
  const served = Object.keys(EmployeeSchema.properties);
  for (const column of unserved.get('employee') ?? []) {
    assert.ok(!served.includes(column) && !served.includes(column.replace(/_e4$/, '')), column);
  }
  for (const [type, columns] of unserved) if (type !== 'employee') assert.deepEqual(columns, []);
});

const summary = (entries: Entry[]) => entries.map((e) => `${e.change} ${e.resource} ${e.id}`);

describeEachDialect('GET /changes', (dialect) => {
  it('bootstraps with every record as the API serves it, then has nothing new', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), ...smallCompany(2, 100)]);
    const key = await api.createKey(1);
    const { entries, cursor } = await readAll(api, key);
    assert.deepEqual(summary(entries), [
      'upsert employee 1',
      'upsert leave_type 1',
      'upsert leave 1',
      'upsert expense_category 1',
      'upsert expense 1',
    ]);
    for (const path of ['/employees/1', '/leaves/1', '/expenses/1']) {
      const single = await api.get(path, key);
      const entry = entries.find((e) => path.startsWith(`/${e.resource}s/`));
      assert.deepEqual(entry?.record, single.json.data, path);
    }
    assert.deepEqual(entries[1]?.record, (await api.get('/leave-types', key)).json.data[0]);
    assert.deepEqual(entries[3]?.record, (await api.get('/expense-categories', key)).json.data[0]);
    assert.match(entries[0]?.changed_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const again = await api.get(`/changes?after=${cursor}`, key);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { data: [], meta: { next_cursor: cursor, has_more: false } });

    // An import that changes nothing adds nothing, and keeps the company's cached answers.
    const version = async () =>
      (
        await api.handle.db
          .selectFrom('companies')
          .select(['data_version', 'change_seq'])
          .where('id', '=', 1)
          .executeTakeFirstOrThrow()
      ).data_version;
    const before = await version();
    await api.load(smallCompany(1, 0));
    assert.deepEqual((await readAll(api, key, cursor)).entries, []);
    assert.equal(await version(), before);
  });

  it('sends a page as UTF-8 JSON, compressed for a client that asks, and its length to HEAD', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    // Names outside Latin-1 (Yılmaz), within it (José) and ASCII (Ann Lee): one text, one encoding.
    await api.load([
      ...smallCompany(1, 0),
      ...Array.from({ length: 40 }, (_, i) =>
        employee(
          1,
          i + 2,
          i % 2 ? { first_name: 'José' } : { first_name: 'Ann', last_name: 'Lee' },
        ),
      ),
    ]);
    const key = await api.createKey(1);
    const request = (method: 'GET' | 'HEAD', encoding: string) =>
      api.app.inject({
        method,
        url: `${API_PREFIX}/changes?limit=1000`,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': encoding },
      });
    const plain = await request('GET', 'identity');
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(plain.headers['content-length'], String(plain.rawPayload.length));
    const page = JSON.parse(plain.rawPayload.toString('utf8'));
    assert.equal(page.data.length, 45);
    assert.deepEqual(
      new Set(
        page.data
          .flatMap((e: Entry) => (e.resource === 'employee' ? [e.record] : []))
          .map((r: { full_name: string }) => r.full_name),
      ),
      new Set(['Ayşe Yılmaz', 'José Yılmaz', 'Ann Lee']),
    );
    const zipped = await request('GET', 'gzip');
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(zipped.rawPayload), plain.rawPayload);
    assert.equal(zipped.headers.etag, plain.headers.etag);
    const head = await request('HEAD', 'identity');
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(plain.rawPayload.length));
    assert.equal(head.rawPayload.length, 0);
  });

  it('sees a record whose attachments, items or receipt alone changed, and not the same ones again', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await writeJpeg(api.dir, 'a.jpg');
    await writeJpeg(api.dir, 'b.jpg', 60, 20);
    const items = [
      { name: 'Ride', quantity: 1, price: '10.00' },
      { name: 'Tip', quantity: 1, price: '2.00' },
    ];
    const documentWith = (attachments: unknown[]) => ({
      deadline: null,
      obligation_status: null,
      attachments,
    });
    const records = (fields: {
      attachments?: unknown[];
      items?: unknown[];
      receipt?: unknown;
      leave2?: unknown[];
    }) => [
      ...smallCompany(1, 0),
      leave(1, 2, 1, 1, {
        document: documentWith(fields.attachments ?? [{ file_name: 'note.pdf' }]),
      }),
      leave(1, 3, 1, 1, { document: documentWith(fields.leave2 ?? []) }),
      expense(1, 2, 1, 1, { items: fields.items ?? items, receipt: fields.receipt ?? null }),
    ];
    await api.load(records({}));
    const key = await api.createKey(1);
    let { cursor } = await readAll(api, key);
    const changes = async (fields: Parameters<typeof records>[0]) => {
      await api.load(records(fields));
      const read = await readAll(api, key, cursor);
      cursor = read.cursor;
      return summary(read.entries);
    };
    assert.deepEqual(await changes({}), []);
    assert.deepEqual(await changes({ attachments: [{ file_name: 'other.pdf' }] }), [
      'upsert leave 2',
    ]);
    assert.deepEqual(await changes({ attachments: [{ file_name: 'other.pdf' }] }), []);
    assert.deepEqual(await changes({ attachments: [], leave2: [{ file_name: 'new.pdf' }] }), [
      'upsert leave 2',
      'upsert leave 3',
    ]);
    assert.deepEqual(await changes({ attachments: [], leave2: [{ file_name: 'new.pdf' }] }), []);
    // The same items in another order are another record.
    assert.deepEqual(
      await changes({
        attachments: [],
        leave2: [{ file_name: 'new.pdf' }],
        items: [...items].reverse(),
      }),
      ['upsert expense 2'],
    );
    const same = {
      attachments: [],
      leave2: [{ file_name: 'new.pdf' }],
      items: [...items].reverse(),
    };
    assert.deepEqual(await changes({ ...same, receipt: { original: 'a.jpg' } }), [
      'upsert expense 2',
    ]);
    assert.deepEqual(await changes({ ...same, receipt: { original: 'a.jpg' } }), []);
    assert.deepEqual(await changes({ ...same, receipt: { original: 'b.jpg' } }), [
      'upsert expense 2',
    ]);
    assert.deepEqual(await changes(same), ['upsert expense 2']);
    const expense2 = (await api.get('/expenses/2', key)).json.data;
    assert.equal(expense2.receipt, null);
    assert.deepEqual(
      expense2.items.map((item: { name: string }) => item.name),
      ['Tip', 'Ride'],
    );
  });

  it('a change to an employee’s unserved fields alone is stored, and nothing a client sees moves', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    // Employee 1 carries no updated_at (the import's time), employee 2 its own.
    const imported = [company(1), employee(1, 1, { updated_at: undefined }), employee(1, 2)];
    await api.load(imported);
    const key = await api.createKey(1);
    const { cursor } = await readAll(api, key);
    const read = async (id: number) => {
      const res = await api.get(`/employees/${id}`, key);
      return { body: res.body, etag: res.headers.etag };
    };
    const before = [await read(1), await read(2)];
    const version = (await companyVersions(api.handle.db)).get(1);

    const unserved = { salary: '1.00', iban: 'TR-NEW', national_id: 'NID-NEW', address: 'New' };
    await api.load([
      company(1),
      employee(1, 1, { ...unserved, updated_at: undefined }),
      employee(1, 2, unserved),
    ]);
    // Stored…
    const salaries = await api.handle.db
      .selectFrom('employees')
      .select(['salary_e4', 'iban', 'national_id', 'address'])
      .orderBy('id')
      .execute();
    for (const row of salaries) {
      assert.deepEqual(row, {
        salary_e4: 10_000,
        iban: 'TR-NEW',
        national_id: 'NID-NEW',
        address: 'New',
      });
    }
    // …but no feed entry, no new updated_at or ETag, no new data version.
    assert.deepEqual((await readAll(api, key, cursor)).entries, []);
    assert.deepEqual([await read(1), await read(2)], before);
    assert.equal((await companyVersions(api.handle.db)).get(1), version);

    // With a served field, the employee changes as before, unserved fields and all.
    await api.load([
      company(1),
      employee(1, 1, { ...unserved, updated_at: undefined, position: 'CFO' }),
    ]);
    assert.deepEqual(summary((await readAll(api, key, cursor)).entries), ['upsert employee 1']);
    assert.match((await read(1)).body, /"position":"CFO"/);
  });

  it('follows updates, what embeds them, deletions and deactivations, in commit order', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), leave(1, 2, 1, 1), expense(1, 2, 1, 1)]);
    const key = await api.createKey(1);
    let { cursor } = await readAll(api, key);

    // A renamed employee: their leaves and expenses embed the name, so they come again.
    await api.load([company(1), employee(1, 1, { last_name: 'Renamed' })]);
    let next = await readAll(api, key, cursor);
    assert.deepEqual(summary(next.entries), [
      'upsert employee 1',
      'upsert leave 1',
      'upsert leave 2',
      'upsert expense 1',
      'upsert expense 2',
    ]);
    assert.match(JSON.stringify(next.entries[1]?.record), /Renamed/);
    cursor = next.cursor;

    // A new salary and position, a leave type's new quota: nothing a leave or expense embeds,
    // so only the employee and the leave type come again.
    await api.load([
      company(1),
      employee(1, 1, { last_name: 'Renamed', salary: '99999.00', position: 'Controller' }),
      leaveType(1, 1, { max_days_per_year: 20 }),
    ]);
    next = await readAll(api, key, cursor);
    assert.deepEqual(summary(next.entries), ['upsert employee 1', 'upsert leave_type 1']);
    cursor = next.cursor;

    // Deleted: a delete entry; gone from lists, totals and single reads.
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 2 }]);
    next = await readAll(api, key, cursor);
    assert.deepEqual(summary(next.entries), ['delete expense 2']);
    assert.equal(next.entries[0]?.record, null);
    assert.equal((await api.get('/expenses/2', key)).status, 404);
    assert.equal((await api.get('/expenses', key)).json.meta.total, 1);
    cursor = next.cursor;

    // A category that left its list is a delete; back in it, an upsert.
    await api.load([category(1, 1, { active: false })]);
    next = await readAll(api, key, cursor);
    // The expense embeds its inactive category as it did: it does not come again.
    assert.deepEqual(summary(next.entries), ['delete expense_category 1']);
    await api.load([category(1, 1, { active: true })]);
    next = await readAll(api, key, next.cursor);
    assert.deepEqual(summary(next.entries), ['upsert expense_category 1']);
    // A renamed category: the expense embeds the name, so it comes again.
    await api.load([category(1, 1, { name: 'Travel, renamed' })]);
    next = await readAll(api, key, next.cursor);
    assert.deepEqual(summary(next.entries), ['upsert expense_category 1', 'upsert expense 1']);
    assert.match(JSON.stringify(next.entries[1]?.record), /Travel, renamed/);

    // A record changed twice appears once, at its latest change.
    const all = await readAll(api, key);
    assert.deepEqual(summary(all.entries), [
      'upsert leave 1',
      'upsert leave 2',
      'upsert employee 1',
      'upsert leave_type 1',
      'delete expense 2',
      'upsert expense_category 1',
      'upsert expense 1',
    ]);
    // Any page size reads the same entries.
    assert.deepEqual((await readAll(api, key, undefined, 1)).entries, all.entries);
    assert.deepEqual((await readAll(api, key, undefined, 3)).entries, all.entries);
  });

  it('leaves out what the key may not read, and refuses to name it', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    await api.load(smallCompany(1, 0));
    const key = await api.createKey(1, { scopes: ['leaves.read'] });
    // A key that may read everything asks first: its answer is not the other key's.
    const everything = await readAll(api, await api.createKey(1));
    assert.equal(everything.entries.length, 5);
    const { entries } = await readAll(api, key);
    assert.deepEqual(summary(entries), [
      'upsert employee 1',
      'upsert leave_type 1',
      'upsert leave 1',
    ]);
    const refused = await api.get('/changes?resources=leave,expense', key);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'insufficient_scope');
    // A missing scope comes before a bad parameter (docs/api.md "Authentication, in this order"),
    // whichever it is.
    for (const query of [
      'resources=expense&limit=0',
      'resources=expense,bogus',
      'resources=leave&resources=%20expense&after=abc',
    ]) {
      const first = await api.get(`/changes?${query}`, key);
      assert.equal(first.status, 403, query);
      assert.equal(first.json.code, 'insufficient_scope', query);
    }
    const only = await api.get('/changes?resources=leave', key);
    assert.deepEqual(summary(only.json.data), ['upsert leave 1']);
  });

  it('refuses malformed parameters and another company’s cursor', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), ...smallCompany(2, 100)]);
    await api.load([employee(2, 101, { last_name: 'Again' })]);
    const one = await api.createKey(1);
    const two = await api.createKey(2);
    for (const query of [
      'after=x',
      'after=',
      'after=MC4wLjA=',
      'limit=0',
      'limit=1001',
      `limit=1${'0'.repeat(309)}`,
      'limit=1e2',
      'limit=%2B5',
      'resources=salary',
    ]) {
      const res = await api.get(`/changes?${query}`, one);
      assert.equal(res.status, 422, `${query}: ${res.body}`);
      assert.equal(res.json.code, 'validation_failed');
    }
    // A position in company 2's feed is none in company 1's: read on from it, company 1's
    // client would skip (or never see) changes.
    const theirs = await readAll(api, two);
    const mine = await api.get(`/changes?after=${theirs.cursor}`, one);
    assert.equal(mine.status, 422, mine.body);
    assert.deepEqual(mine.json.errors, [
      {
        parameter: 'after',
        message: 'must be a cursor from an earlier answer of this operation for this company',
      },
    ]);
    assert.doesNotMatch(mine.body, /Again|"id":10\d/);
  });

  it('reads on from a cursor written before cursors named their company', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load(smallCompany(1, 0));
    const key = await api.createKey(1);
    const { entries } = await readAll(api, key);
    // The third entry's position, as cursors were written before: `seq.rank.id`.
    const third = entries[2];
    assert.equal(third?.resource, 'leave');
    const [seq] = Buffer.from(third.cursor, 'base64url').toString().split('.');
    const legacy = Buffer.from(`${seq}.2.${third.id}`).toString('base64url');
    const rest = await api.get(`/changes?after=${legacy}`, key);
    assert.equal(rest.status, 200, rest.body);
    assert.deepEqual(summary(rest.json.data), summary(entries.slice(3)));
    const last = entries.at(-1);
    const legacyLast = Buffer.from(`${seq}.4.${last?.id}`).toString('base64url');
    const nothing = await api.get(`/changes?after=${legacyLast}`, key);
    assert.deepEqual(nothing.json, {
      data: [],
      meta: { next_cursor: legacyLast, has_more: false },
    });
  });

  it('answers 410 for a cursor ahead of the feed (its data restored from an older copy)', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load(smallCompany(1, 0));
    const key = await api.createKey(1);
    const { cursor } = await readAll(api, key);
    const parts = Buffer.from(cursor, 'base64url').toString().split('.');
    // Nothing forgotten yet: four parts, as releases before the fifth wrote and read them.
    assert.equal(parts.length, 4);
    const [seq, rank, id, companyId] = parts;
    assert.equal(companyId, '1');
    const ahead = Buffer.from(`${Number(seq) + 1}.${rank}.${id}.1`).toString('base64url');
    const res = await api.get(`/changes?after=${ahead}`, key);
    assert.equal(res.status, 410, res.body);
    assert.equal(res.json.code, 'cursor_expired');
    assert.match(res.json.detail, /from an import the change feed does not hold/);
    // The next import takes a number of its own, not the one the cursor names: still refused.
    await api.load([employee(1, 1, { last_name: 'Later' })]);
    const [next] = [...(await companyVersions(api.handle.db, 'change_seq')).values()];
    assert.ok(next !== undefined && next > Number(seq) + 1);
    assert.equal((await api.get(`/changes?after=${ahead}`, key)).status, 410);
  });

  it('answers 410 for a cursor from an import lost with a restore, also once imports follow the restore', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load(smallCompany(1, 0));
    const key = await api.createKey(1);
    const backup = {
      cursor: (await readAll(api, key)).cursor,
      change_seq: (await companyVersions(api.handle.db, 'change_seq')).get(1) ?? 0,
      data_version: (await companyVersions(api.handle.db)).get(1) ?? 0,
    };
    // An import after the backup, read by the client: its cursor names that import.
    await api.load([employee(1, 50)]);
    const lost = await readAll(api, key, backup.cursor);
    assert.deepEqual(summary(lost.entries), ['upsert employee 50']);
    // The backup restored: the lost import's employee, its commit and the company's numbers.
    const { db } = api.handle;
    await db.deleteFrom('employees').where('company_id', '=', 1).where('id', '=', 50).execute();
    await db
      .deleteFrom('change_commits')
      .where('company_id', '=', 1)
      .where('change_seq', '>', backup.change_seq)
      .execute();
    await db
      .updateTable('companies')
      .set({ change_seq: backup.change_seq, data_version: backup.data_version })
      .where('id', '=', 1)
      .execute();
    assert.equal((await api.get(`/changes?after=${lost.cursor}`, key)).status, 410);
    // An import after the restore: the backup's cursor reads it; the lost import's cursor,
    // whose client holds employee 50, is still refused (it would read on without its deletion).
    await api.load([employee(1, 60)]);
    const res = await api.get(`/changes?after=${lost.cursor}`, key);
    assert.equal(res.status, 410, res.body);
    assert.equal(res.json.code, 'cursor_expired');
    assert.deepEqual(summary((await readAll(api, key, backup.cursor)).entries), [
      'upsert employee 60',
    ]);
  });

  it('answers 410 for a cursor older than the deletions it has forgotten', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), expense(1, 2, 1, 1)]);
    const key = await api.createKey(1);
    const { cursor } = await readAll(api, key);
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 2 }]);
    // Remembered for 30 days: the next import forgets nothing yet.
    await api.load([employee(1, 1, { last_name: 'Later' })]);
    assert.equal((await api.get(`/changes?after=${cursor}`, key)).status, 200);
    // With no days kept, the next import that changes something forgets it.
    await api.load([employee(1, 1, { last_name: 'Later still' })], { changesRetentionDays: 0 });
    const expired = await api.get(`/changes?after=${cursor}`, key);
    assert.equal(expired.status, 410, expired.body);
    assert.equal(expired.json.code, 'cursor_expired');
    // From the beginning it still works, without the forgotten deletion.
    const all = await readAll(api, key);
    assert.ok(!summary(all.entries).includes('delete expense 2'));
  });

  it('gives back the cursor sent when nothing is new, also after the feed forgot deletions', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), expense(1, 2, 1, 1), expense(1, 3, 1, 1)]);
    const key = await api.createKey(1);
    const { cursor } = await readAll(api, key);
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 2 }]);
    await api.load([expense(1, 3, 1, 1, { title: 'Later' })], { changesRetentionDays: 0 });
    // Nothing new for a reader of employees: the cursor it sent, as it sent it.
    const employees = await api.get(`/changes?after=${cursor}&resources=employee`, key);
    assert.equal(employees.status, 200, employees.body);
    assert.deepEqual(employees.json, { data: [], meta: { next_cursor: cursor, has_more: false } });
  });

  it('answers 410 for a cursor from before deletions an instance of a release before 0015 forgot', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), expense(1, 2, 1, 1), expense(1, 3, 1, 1)]);
    const key = await api.createKey(1);
    const { cursor } = await readAll(api, key);
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 2 }]);
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 3 }]);
    // What such a release's import did when it forgot them (CHANGES_RETENTION_DAYS): the
    // deletions leave the feed, and only the company's row says so; changes_forgotten, which it
    // does not know, keeps what it held.
    const { db } = api.handle;
    const newest = await db
      .selectFrom('deleted_records')
      .select(['change_seq', 'resource', 'record_id'])
      .where('company_id', '=', 1)
      .orderBy('change_seq', 'desc')
      .executeTakeFirstOrThrow();
    await db.deleteFrom('deleted_records').where('company_id', '=', 1).execute();
    await db
      .updateTable('companies')
      .set({
        changes_forgotten_seq: Number(newest.change_seq),
        changes_forgotten_resource: Number(newest.resource),
        changes_forgotten_id: Number(newest.record_id),
      })
      .where('id', '=', 1)
      .execute();
    // Read on, the client would never learn that expenses 2 and 3 are gone.
    const expired = await api.get(`/changes?after=${cursor}`, key);
    assert.equal(expired.status, 410, expired.body);
    assert.equal(expired.json.code, 'cursor_expired');
    // From the beginning it reads, and a cursor it gives reads on.
    const all = await readAll(api, key);
    assert.ok(!summary(all.entries).some((entry) => entry.includes('expense 2')));
    assert.equal((await api.get(`/changes?after=${all.cursor}`, key)).status, 200);
  });

  it('answers 410 for a cursor inside an import, before a deletion it has forgotten, and not after it', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), expense(1, 2, 1, 1), expense(1, 3, 1, 1)]);
    const key = await api.createKey(1);
    const { cursor: start } = await readAll(api, key);
    const remove = (id: number) => ({ type: 'delete', resource: 'expense', company_id: 1, id });
    await api.load([employee(1, 1, { last_name: 'Renamed' }), remove(2), remove(3)]);
    // One entry a page: the cursor a client holds when it stops after each.
    const { entries } = await readAll(api, key, start, 1);
    assert.deepEqual(summary(entries), [
      'upsert employee 1',
      'upsert leave 1',
      'upsert expense 1',
      'delete expense 2',
      'delete expense 3',
    ]);
    await api.load([employee(1, 1, { last_name: 'Later' })], { changesRetentionDays: 0 });
    // Every cursor of that import before its last deletion missed one: read again.
    for (const entry of entries.slice(0, -1)) {
      const res = await api.get(`/changes?after=${entry.cursor}`, key);
      assert.equal(res.status, 410, `after ${summary([entry])}: ${res.body}`);
    }
    // The last one has seen them all, and reads on.
    const after = await api.get(`/changes?after=${entries.at(-1)?.cursor}`, key);
    assert.equal(after.status, 200, after.body);
    assert.deepEqual(summary(after.json.data), [
      'upsert employee 1',
      'upsert leave 1',
      'upsert expense 1',
    ]);
    // The same on a database that had forgotten them before migration 0015 (which fills each
    // resource's newest forgotten deletion from the newest of all).
    const { error } = await new Migrator({
      db: api.handle.db,
      provider: migrationProvider,
    }).migrateTo('0014_data_version_notify');
    assert.equal(error, undefined);
    assert.equal(
      (await migrateDatabase(api.handle)).applied[0],
      '0015_changes_forgotten_resources',
    );
    for (const [index, entry] of entries.entries()) {
      const res = await api.get(`/changes?after=${entry.cursor}`, key);
      assert.equal(res.status, index < entries.length - 1 ? 410 : 200, res.body);
    }
  });

  it('reads from the beginning page by page after it forgot deletions, and reads on after forgetting more', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    const expenses = [2, 3, 4, 5].map((id) => expense(1, id, 1, 1));
    await api.load([...smallCompany(1, 0), ...expenses]);
    const key = await api.createKey(1);
    const remove = (id: number) => ({ type: 'delete', resource: 'expense', company_id: 1, id });
    await api.load([remove(2)]);
    const deletedBy = (await companyVersions(api.handle.db, 'change_seq')).get(1);
    await api.load([employee(1, 2)], { changesRetentionDays: 0 });
    // Begun after the deletion was forgotten: every page reads on (it never needed it).
    const { entries, cursor } = await readAll(api, key, undefined, 1);
    const forgotten = Buffer.from(cursor, 'base64url').toString().split('.')[4];
    assert.equal(forgotten, String(deletedBy), 'the cursor carries how far the feed had forgotten');
    assert.deepEqual(summary(entries), [
      'upsert employee 1',
      'upsert leave_type 1',
      'upsert leave 1',
      'upsert expense_category 1',
      'upsert expense 1',
      'upsert expense 3',
      'upsert expense 4',
      'upsert expense 5',
      'upsert employee 2',
    ]);
    // When the next deletion is forgotten, a client that had read past it reads on; one
    // before it missed it, as did the one that had read everything before it was made.
    await api.load([remove(3)]);
    const { entries: rest } = await readAll(api, key, entries[5]?.cursor, 1);
    assert.deepEqual(summary(rest), [
      'upsert expense 4',
      'upsert expense 5',
      'upsert employee 2',
      'delete expense 3',
    ]);
    await api.load([employee(1, 3)], { changesRetentionDays: 0 });
    // A cursor claiming the feed had forgotten more than it has: not one this database gave.
    const [seq, rank, id, companyId] = Buffer.from(entries[4]?.cursor as string, 'base64url')
      .toString()
      .split('.');
    const claimed = Buffer.from(
      `${seq}.${rank}.${id}.${companyId}.${Number.MAX_SAFE_INTEGER}`,
    ).toString('base64url');
    for (const [after, status] of [
      [rest.at(-1)?.cursor, 200],
      [entries[4]?.cursor, 410],
      [cursor, 410],
      [claimed, 410],
    ] as const) {
      const res = await api.get(`/changes?after=${after}`, key);
      assert.equal(res.status, status, res.body);
    }
  });

  it('never answers 410 for a forgotten deletion of a resource the client does not read', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), expense(1, 2, 1, 1)]);
    const full = await api.createKey(1);
    const leavesOnly = await api.createKey(1, { scopes: ['leaves.read'] });
    const first = async (key: string, query: string) => {
      const res = await api.get(`/changes?limit=1000${query}`, key);
      assert.equal(res.status, 200, res.body);
      return res.json.meta.next_cursor as string;
    };
    const employees = await first(full, '&resources=employee');
    const leaves = await first(leavesOnly, '');
    await api.load([{ type: 'delete', resource: 'expense', company_id: 1, id: 2 }]);
    // Nothing new for them: the same cursors.
    assert.equal(await first(full, `&resources=employee&after=${employees}`), employees);
    assert.equal(await first(leavesOnly, `&after=${leaves}`), leaves);
    await api.load([leaveType(1, 1, { name: 'Renamed' })], { changesRetentionDays: 0 });
    assert.equal(await first(full, `&resources=employee&after=${employees}`), employees);
    const read = await api.get(`/changes?after=${leaves}`, leavesOnly);
    assert.equal(read.status, 200, read.body);
    assert.deepEqual(summary(read.json.data), ['upsert leave_type 1', 'upsert leave 1']);
    // Reading expenses from before that deletion, it is one it missed.
    const all = await api.get(`/changes?after=${employees}`, full);
    assert.equal(all.status, 410, all.body);
  });

  it('refuses a delete of a record others still name, and of another company’s', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await api.load([...smallCompany(1, 0), ...smallCompany(2, 100), leaveType(1, 2)]);
    await assert.rejects(
      api.load([{ type: 'delete', resource: 'employee', company_id: 1, id: 1 }]),
      /line 1: id: employee 1 is still named by 2 records \(leaves, expenses\)/,
    );
    await assert.rejects(
      api.load([{ type: 'delete', resource: 'leave', company_id: 1, id: 101 }]),
      /line 1: company_id: leave 101 already belongs to company 2/,
    );
    // Children first, in the same file: accepted; an id the company lacks is no change.
    await api.load([
      { type: 'delete', resource: 'leave', company_id: 1, id: 1 },
      { type: 'delete', resource: 'expense', company_id: 1, id: 1 },
      { type: 'delete', resource: 'employee', company_id: 1, id: 1 },
      { type: 'delete', resource: 'employee', company_id: 1, id: 999 },
      { type: 'delete', resource: 'leave_type', company_id: 1, id: 2 },
    ]);
    const key = await api.createKey(1);
    assert.equal((await api.get('/employees/1', key)).status, 404);
    assert.equal((await api.get('/employees', key)).json.meta.total, 0);
  });
});
