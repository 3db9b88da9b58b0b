import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { fold } from '../../src/fold.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { company, employee, leave, leaveType } from '../helpers/records.ts';

/**
 * A leave search with no filter but statuses is counted from each employee's leaves of each
 * status (`leave_counts`, kept by the import); any other is counted from its leaves. Both must
 * give what testing every leave gives, for a search that finds few employees (listed by id)
 * and one that finds more than are listed (a subquery), after imports that add, change, move
 * and delete leaves.
 */
const FIRST_NAMES = ['Ayşe', 'Mehmet', 'Zoë', 'Can', 'Ömer', 'Işıl'];
const STATUSES = ['approved', 'pending', 'rejected', 'cancelled'] as const;
const EMPLOYEES = 600;

type LeaveRecord = ReturnType<typeof leave>;

/** Company `companyId`'s employees (ids from `base` + 1) and two leaves each. */
function staff(companyId: number, base: number) {
  const employees = Array.from({ length: EMPLOYEES }, (_, i) =>
    employee(companyId, base + i + 1, {
      first_name: FIRST_NAMES[i % FIRST_NAMES.length],
      last_name: `Kaya${i}`,
      employee_number: `P-${i}`,
    }),
  );
  const leaves: LeaveRecord[] = employees.flatMap((e, i) =>
    [0, 1].map((n) =>
      leave(companyId, base * 10 + 2 * i + n + 1, e.id, base + 1 + n, {
        status: STATUSES[(i + n) % STATUSES.length],
      }),
    ),
  );
  const types = [leaveType(companyId, base + 1), leaveType(companyId, base + 2)];
  return { employees, leaves, types };
}

const SEARCHES = ['a', 'AYŞE', 'p-1', 'zo', '5', 'ışı', 'nobody'];
const FILTERS = [
  { query: '', keeps: () => true },
  { query: '&status=approved', keeps: (l: LeaveRecord) => l.status === 'approved' },
  {
    query: '&status=pending,rejected',
    keeps: (l: LeaveRecord) => l.status === 'pending' || l.status === 'rejected',
  },
  { query: '&leave_type_id=2', keeps: (l: LeaveRecord) => l.leave_type_id === 2 },
];

/** Every search and filter: the total and the rows of its pages, against testing each leave. */
async function checkSearches(
  api: TestApi,
  key: string,
  employees: ReturnType<typeof staff>['employees'],
  leaves: LeaveRecord[],
  label: string,
) {
  const found = (search: string) =>
    new Set(
      employees
        .filter(
          (e) =>
            fold(`${e.first_name} ${e.last_name}`).includes(fold(search)) ||
            fold(e.employee_number).includes(fold(search)),
        )
        .map((e) => e.id),
    );
  for (const search of SEARCHES) {
    const ids = found(search);
    for (const filter of FILTERS) {
      const expected = leaves
        .filter((l) => ids.has(l.employee_id) && filter.keeps(l))
        .map((l) => l.id)
        .sort((a, b) => a - b);
      const seen: number[] = [];
      for (let page = 1; ; page++) {
        const res = await api.get(
          `/leaves?search=${encodeURIComponent(search)}${filter.query}&sort=id&per_page=100&page=${page}`,
          key,
        );
        assert.equal(res.status, 200, res.body);
        const what = `${label}: ${search}${filter.query}`;
        assert.equal(res.json.meta.total, expected.length, what);
        seen.push(...res.json.data.map((l: { id: number }) => l.id));
        if (page >= res.json.meta.last_page) break;
      }
      assert.deepEqual(seen, expected, `${label}: ${search}${filter.query}`);
    }
  }
}

/** `leave_counts` holds each company's leaves counted by employee and status, and no more. */
async function assertCountsKept(api: TestApi) {
  const { rows } = await sql<{ mismatches: number | string }>`
    select count(*) as mismatches from (
      select company_id, employee_id, status, count(*) as leaves from leaves
      group by company_id, employee_id, status
    ) as counted
    full outer join leave_counts as kept
      on kept.company_id = counted.company_id and kept.employee_id = counted.employee_id
      and kept.status = counted.status
    where kept.leaves is null or counted.leaves is null or kept.leaves <> counted.leaves`.execute(
    api.handle.db,
  );
  assert.equal(Number(rows[0]?.mismatches), 0);
}

describeEachDialect('leave searches', (dialect) => {
  it('are counted from each employee’s leaves by status, kept by every import', async (t) => {
    const ours = staff(1, 0);
    // Another company with the same names: none of its leaves may count.
    const theirs = staff(2, 1000);
    const api = await useApi(t, dialect, {
      records: [
        company(1),
        company(2),
        ...ours.types,
        ...theirs.types,
        ...ours.employees,
        ...theirs.employees,
        ...ours.leaves,
        ...theirs.leaves,
      ],
    });
    const key = await api.createKey(1);
    await assertCountsKept(api);
    await checkSearches(api, key, ours.employees, ours.leaves, 'first import');

    // Statuses changed, leaves moved to other employees, some deleted, some added.
    const changed = ours.leaves.map((l, i) =>
      i % 7 === 0
        ? { ...l, status: 'rejected' }
        : i % 11 === 0
          ? { ...l, employee_id: ((l.employee_id * 13) % EMPLOYEES) + 1 }
          : l,
    );
    const deleted = new Set(changed.filter((_, i) => i % 5 === 0).map((l) => l.id));
    const added = ours.employees
      .slice(0, 40)
      .map((e, i) => leave(1, 5000 + i, e.id, 1, { status: 'pending' }));
    await api.load([
      ...changed.filter((l) => !deleted.has(l.id)),
      ...[...deleted].map((id) => ({ type: 'delete', resource: 'leave', company_id: 1, id })),
      ...added,
    ]);
    const now = [...changed.filter((l) => !deleted.has(l.id)), ...added];
    await assertCountsKept(api);
    await checkSearches(api, key, ours.employees, now, 'after a re-import');
  });

  it('take the total of a search with no filter but statuses from leave_counts', async (t) => {
    const ours = staff(1, 0);
    const api = await useApi(t, dialect, {
      records: [company(1), ...ours.types, ...ours.employees, ...ours.leaves],
    });
    const key = await api.createKey(1);
    // 'Mehmet' finds employees 2, 8, …; the first gains 1,000 pending leaves in the table alone.
    await api.handle.db
      .updateTable('leave_counts')
      .set((eb) => ({ leaves: eb('leaves', '+', 1000) }))
      .where('company_id', '=', 1)
      .where('employee_id', '=', 2)
      .where('status', '=', 'pending')
      .execute();
    const total = async (query: string) =>
      (await api.get(`/leaves?search=mehmet${query}`, key)).json.meta.total;
    const mehmets = EMPLOYEES / FIRST_NAMES.length;
    assert.equal(await total(''), 2 * mehmets + 1000);
    assert.equal(
      await total('&status=pending'),
      ours.leaves.filter(
        (l) => l.status === 'pending' && (l.employee_id - 2) % FIRST_NAMES.length === 0,
      ).length + 1000,
    );
    // Counted from the leaves themselves: the table is not read.
    assert.equal(await total('&leave_type_id=1,2'), 2 * mehmets);
  });

  it('are counted right on a database migrated with its leaves already stored', async (t) => {
    const ours = staff(1, 0);
    const api = await useApi(t, dialect, {
      records: [company(1), ...ours.types, ...ours.employees, ...ours.leaves],
    });
    const key = await api.createKey(1);
    // Back to the schema before leave_counts, then forward: the migration fills the table.
    const { error } = await new Migrator({
      db: api.handle.db,
      provider: migrationProvider,
    }).migrateTo('0009_expense_text_indexes');
    assert.equal(error, undefined);
    assert.deepEqual((await migrateToLatest(api.handle.db)).applied.slice(0, 6), [
      '0010_leave_counts',
      '0011_changes_forgotten_position',
      '0012_receipt_file_indexes',
      '0013_list_sample_months',
      '0014_data_version_notify',
      '0015_changes_forgotten_resources',
    ]);
    await assertCountsKept(api);
    await checkSearches(api, key, ours.employees, ours.leaves, 'migrated');
  });
});
