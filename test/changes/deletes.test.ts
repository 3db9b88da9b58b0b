import assert from 'node:assert/strict';
import { it } from 'node:test';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
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
import { listFiles, snapshotDatabase } from '../helpers/snapshot.ts';

const del = (resource: string, companyId: number, id: number) => ({
  type: 'delete',
  resource,
  company_id: companyId,
  id,
});

describeEachDialect('delete lines', (dialect) => {
  it('leave the database and the receipt store as they were when a file is refused', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await writeJpeg(api.dir, 'r.jpg');
    await api.load([
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'r.jpg' } }),
      ...smallCompany(2, 100),
    ]);
    const before = await snapshotDatabase(api.handle.db);
    const files = listFiles(api.config.receiptsDir);
    const refused: Array<[unknown[], RegExp]> = [
      [
        [del('expense', 1, 2), del('employee', 1, 1)],
        /^line 2: id: employee 1 is still named by 2 records \(leaves, expenses\)/,
      ],
      [
        [employee(1, 2), leave(1, 1, 1, 1, { substitute_employee_id: 2 }), del('employee', 1, 2)],
        /^line 3: id: employee 2 is still named by 1 record \(leaves as substitute\)/,
      ],
      [
        [del('leave_type', 1, 1)],
        /^line 1: id: leave_type 1 is still named by 1 record \(leaves\)/,
      ],
      [
        [del('expense_category', 1, 1)],
        /^line 1: id: expense_category 1 is still named by 2 records \(expenses\)/,
      ],
      [
        [del('expense', 1, 2), del('expense', 1, 101)],
        /^line 2: company_id: expense 101 already belongs to company 2/,
      ],
      [
        [del('leave', 1, 1), leave(1, 5, 1, 1), del('employee', 1, 1)],
        /^line 3: id: employee 1 is still named by 3 records \(leaves, expenses\)/,
      ],
      [
        [del('expense', 1, 1), del('expense', 1, 2), del('employee', 1, 1), leave(1, 9, 1, 1)],
        /^line 3: id: employee 1 is still named by 1 record \(leaves\)/,
      ],
      [
        [
          del('leave', 1, 1),
          del('expense', 1, 1),
          del('expense', 1, 2),
          del('employee', 1, 1),
          leave(1, 9, 1, 1),
        ],
        /^line 5: employee_id: employee 1 was deleted on line 4/,
      ],
      [
        [del('salary', 1, 1)],
        /^line 1: resource: must be one of employee, leave_type, leave, expense_category, expense/,
      ],
      [[del('employee', 3, 1)], /^line 1: company_id: company 3 not found/],
      [[{ type: 'delete', resource: 'leave', company_id: 1 }], /^line 1: id: is required/],
    ];
    for (const [records, message] of refused) {
      await assert.rejects(api.load(records), (error: Error) => {
        assert.ok(error instanceof Error, JSON.stringify(records));
        assert.match(error.message, message);
        return true;
      });
      assert.deepEqual(await snapshotDatabase(api.handle.db), before);
      assert.deepEqual(listFiles(api.config.receiptsDir), files);
    }
  });

  it('remove a record with what it brings, replay as no change, and let it come back', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    await writeJpeg(api.dir, 'r.jpg');
    await api.load([
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'r.jpg' } }),
    ]);
    const key = await api.createKey(1);
    const deletes = [del('expense', 1, 2), del('leave', 1, 1), del('expense', 1, 99)];
    await api.load(deletes);
    assert.deepEqual(listFiles(api.config.receiptsDir), [], 'the receipt files left the store');
    const { db } = api.handle;
    assert.deepEqual(
      await db
        .selectFrom('expense_items')
        .select('expense_id')
        .where('expense_id', '=', 2)
        .execute(),
      [],
    );
    assert.deepEqual(await db.selectFrom('leave_attachments').select('leave_id').execute(), []);
    for (const path of ['/expenses/2', '/leaves/1', '/expenses/2/receipt']) {
      const res = await api.get(path, key);
      assert.equal(res.status, 404, path);
    }
    assert.equal((await api.get('/expenses?search=taxi', key)).json.meta.total, 1);
    assert.equal((await api.get('/leaves', key)).json.meta.total, 0);
    // The key's first request records its use in the background (once a minute): the
    // snapshots below compare what the imports do, so that write must have landed first.
    const keyUsed = async () =>
      (await db.selectFrom('api_keys').select('last_used_at').executeTakeFirst())?.last_used_at;
    await eventually(async () => (await keyUsed()) != null, 'last_used_at written');
    // Replayed: no change at all.
    const after = await snapshotDatabase(db);
    await api.load(deletes);
    assert.deepEqual(await snapshotDatabase(db), after);
    // Back again, later in one file with its deletion: the last line wins.
    await api.load([
      del('leave', 1, 1),
      leave(1, 1, 1, 1),
      del('expense', 1, 1),
      expense(1, 1, 1, 1, { title: 'Back' }),
    ]);
    assert.equal((await api.get('/leaves/1', key)).status, 200);
    assert.equal((await api.get('/expenses/1', key)).json.data.title, 'Back');
    const changes = (await api.get('/changes', key)).json.data.map(
      (e: { change: string; resource: string; id: number }) => `${e.change} ${e.resource} ${e.id}`,
    );
    assert.deepEqual(changes.slice(-3), ['delete expense 2', 'upsert leave 1', 'upsert expense 1']);
    // A leave type and category no longer used can go; an employee with nothing either.
    await api.load([
      company(1),
      employee(1, 7),
      leaveType(1, 7),
      category(1, 7),
      del('employee', 1, 7),
      del('leave_type', 1, 7),
      del('expense_category', 1, 7),
    ]);
    assert.equal((await api.get('/employees/7', key)).status, 404);
  });

  it('replay a file that brings a record back and deletes it again as no change', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    // Expense 2 is stored, 99 never was: each comes on a line and goes on a later one.
    const file = [
      expense(1, 2, 1, 1, { title: 'Again' }),
      expense(1, 99, 1, 1),
      del('expense', 1, 2),
      del('expense', 1, 99),
    ];
    await api.load(file);
    const feed = (await api.get('/changes', key)).json;
    assert.deepEqual(
      feed.data.slice(-2).map((e: { change: string; id: number }) => `${e.change} ${e.id}`),
      ['delete 2', 'delete 99'],
    );
    const { db } = api.handle;
    const keyUsed = async () =>
      (await db.selectFrom('api_keys').select('last_used_at').executeTakeFirst())?.last_used_at;
    await eventually(async () => (await keyUsed()) != null, 'last_used_at written');
    const before = await snapshotDatabase(db);
    await api.load(file);
    assert.deepEqual(await snapshotDatabase(db), before, 'the replay changed nothing');
    const after = (await api.get(`/changes?after=${feed.meta.next_cursor}`, key)).json;
    assert.deepEqual(after, {
      data: [],
      meta: { next_cursor: feed.meta.next_cursor, has_more: false },
    });
  });
});
