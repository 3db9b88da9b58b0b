import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ANCHOR_INTERVAL } from '../../src/db/list-anchors.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { category, company, employee, expense, leave, leaveType } from '../helpers/records.ts';

// More than two anchor intervals, with many ties in every sort key.
const COUNT = 2 * ANCHOR_INTERVAL + 437;

/** A date within a few months of 2020-01-01: many rows share one. */
const day = (i: number) =>
  new Date(Date.UTC(2020, 0, 1) + (i % 97) * 86_400_000).toISOString().slice(0, 10);
const dayAfter = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

function records() {
  const out: unknown[] = [company(1), employee(1, 1), leaveType(1, 1), category(1, 1)];
  for (let i = 0; i < COUNT; i += 1) {
    // Ids out of insertion order, so no sort coincides with the order rows were written in.
    const id = ((i * 7919) % COUNT) + 1;
    out.push(
      leave(1, id, 1, 1, {
        // One in ten cancelled: a filter that keeps a small part of the list.
        status: i % 10 === 3 ? 'cancelled' : 'approved',
        start_date: day(i),
        end_date: dayAfter(day(i), i % 5),
        created_at: `${day(i * 3)}T08:00:00Z`,
        updated_at: `${day(i * 5)}T08:00:00Z`,
      }),
      expense(1, id, 1, 1, {
        status: i % 10 === 3 ? 'pending' : 'paid',
        expense_date: day(i * 11),
        amount: `${(i % 50) + 1}.25`,
        tax_amount: '0.00',
        items: [],
        created_at: `${day(i * 3)}T08:00:00Z`,
        updated_at: `${day(i * 13)}T08:00:00Z`,
      }),
    );
  }
  return out as Array<Record<string, unknown>>;
}

/** The ids in the API's order: the sort key, then the id, both in the given direction. */
function expectedIds(
  rows: Array<Record<string, unknown>>,
  key: (row: Record<string, unknown>) => string | number,
  direction: 1 | -1,
): number[] {
  return [...rows]
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) return (ka < kb ? -1 : 1) * direction;
      return ((a.id as number) - (b.id as number)) * direction;
    })
    .map((row) => row.id as number);
}

describeEachDialect('deep pages', (dialect) => {
  it('are the same rows, in the same order, as walking the whole list', async (t) => {
    const all = records();
    const api = await useApi(t, dialect, { records: all });
    const key = await api.createKey(1);
    const leaves = all.filter((r) => r.type === 'leave');
    const expenses = all.filter((r) => r.type === 'expense');
    const cases: Array<
      [
        string,
        Array<Record<string, unknown>>,
        string,
        (r: Record<string, unknown>) => string | number,
      ]
    > = [
      ['/leaves', leaves, 'id', (r) => r.id as number],
      ['/leaves', leaves, 'start_date', (r) => r.start_date as string],
      ['/leaves', leaves, 'end_date', (r) => r.end_date as string],
      ['/leaves', leaves, 'updated_at', (r) => r.updated_at as string],
      ['/expenses', expenses, 'amount', (r) => Number(r.amount)],
      ['/expenses', expenses, 'expense_date', (r) => r.expense_date as string],
      ['/expenses', expenses, 'created_at', (r) => r.created_at as string],
    ];
    for (const [path, rows, field, sortKey] of cases) {
      for (const direction of [1, -1] as const) {
        const expected = expectedIds(rows, sortKey, direction);
        const sort = direction === 1 ? field : `-${field}`;
        // Pages on, just before and just after anchors, and past the end.
        for (const [perPage, pageNumber] of [
          [100, 10],
          [100, 11],
          [100, 21],
          [100, 25],
          [7, 143],
          [7, 286],
          [33, 61],
          [100, 40],
        ] as Array<[number, number]>) {
          const res = await api.get(
            `${path}?sort=${sort}&per_page=${perPage}&page=${pageNumber}`,
            key,
          );
          assert.equal(res.status, 200, res.body);
          const offset = (pageNumber - 1) * perPage;
          assert.deepEqual(
            res.json.data.map((r: { id: number }) => r.id),
            expected.slice(offset, offset + perPage),
            `${path}?sort=${sort}&per_page=${perPage}&page=${pageNumber}`,
          );
          assert.equal(res.json.meta.total, COUNT);
        }
      }
    }

    // New rows move every later position; the anchors made before are not used again.
    await api.load([
      company(1),
      leave(1, COUNT + 1, 1, 1, { start_date: '2019-12-31', end_date: '2019-12-31' }),
    ]);
    const res = await api.get(`/leaves?sort=start_date&per_page=100&page=11`, key);
    const expected = expectedIds(
      [...leaves, { id: COUNT + 1, start_date: '2019-12-31' }],
      (r) => r.start_date as string,
      1,
    );
    assert.deepEqual(
      res.json.data.map((r: { id: number }) => r.id),
      expected.slice(1000, 1100),
    );
  });
});

describeEachDialect('filtered pages', (dialect) => {
  it('are the same rows, in the same order, whether gathered or walked', async (t) => {
    const all = records();
    const api = await useApi(t, dialect, { records: all });
    const key = await api.createKey(1);
    const leaves = all.filter((r) => r.type === 'leave');
    const expenses = all.filter((r) => r.type === 'expense');
    const recent = day(80);
    type Row = Record<string, unknown>;
    const cases: Array<[string, Row[], (r: Row) => boolean, string, (r: Row) => string | number]> =
      [
        // Filters that keep a small part: gathered.
        [
          `/leaves?updated_since=${recent}T00:00:00Z`,
          leaves,
          (r) => (r.updated_at as string) >= recent,
          'start_date',
          (r) => r.start_date as string,
        ],
        [
          '/leaves?status=cancelled',
          leaves,
          (r) => r.status === 'cancelled',
          'created_at',
          (r) => r.created_at as string,
        ],
        [
          '/expenses?status=pending',
          expenses,
          (r) => r.status === 'pending',
          'amount',
          (r) => Number(r.amount),
        ],
        [
          '/expenses?status=pending',
          expenses,
          (r) => r.status === 'pending',
          'id',
          (r) => r.id as number,
        ],
        // Filters that keep most: walked, deep pages from anchors of the gathered matches.
        [
          '/leaves?status=approved',
          leaves,
          (r) => r.status === 'approved',
          'updated_at',
          (r) => r.updated_at as string,
        ],
        [
          '/expenses?status=paid',
          expenses,
          (r) => r.status === 'paid',
          'expense_date',
          (r) => r.expense_date as string,
        ],
        // A filter that bounds the sort column: walked through that range.
        [
          `/leaves?updated_since=${recent}T00:00:00Z`,
          leaves,
          (r) => (r.updated_at as string) >= recent,
          'updated_at',
          (r) => r.updated_at as string,
        ],
      ];
    for (const [path, rows, keep, field, sortKey] of cases) {
      const kept = rows.filter(keep);
      assert.ok(kept.length > 0 && kept.length < rows.length, path);
      for (const direction of [1, -1] as const) {
        const expected = expectedIds(kept, sortKey, direction);
        const sort = direction === 1 ? field : `-${field}`;
        for (const [perPage, pageNumber] of [
          [100, 1],
          [100, 2],
          [7, 143],
          [7, 144],
          [33, 61],
          [100, 22],
          [100, 30],
        ] as Array<[number, number]>) {
          const url = `${path}&sort=${sort}&per_page=${perPage}&page=${pageNumber}`;
          const res = await api.get(url, key);
          assert.equal(res.status, 200, res.body);
          const offset = (pageNumber - 1) * perPage;
          assert.deepEqual(
            res.json.data.map((r: { id: number }) => r.id),
            expected.slice(offset, offset + perPage),
            url,
          );
          assert.equal(res.json.meta.total, kept.length, url);
        }
      }
    }
  });
});
