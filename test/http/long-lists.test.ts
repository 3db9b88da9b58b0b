import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GATHER_LIMIT } from '../../src/db/pagination.ts';
import { SAMPLE_INTERVAL, SAMPLED_MIN_ROWS } from '../../src/db/sampled-lists.ts';
import { mulberry32, pick } from '../../src/demo/random.ts';
import { fold } from '../../src/fold.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leavesCreatedTheDayBefore,
  leaveType,
} from '../helpers/records.ts';

/**
 * Lists long enough to have samples (src/db/sampled-lists.ts) and filters whose matches pass
 * GATHER_LIMIT: every way of reading a page (from samples, walked from anchors, gathered)
 * must give the rows and total that sorting the whole list gives.
 */
const COUNT = SAMPLED_MIN_ROWS + 1_500;
const LEAVE_STATUSES = ['approved', 'approved', 'approved', 'pending', 'rejected', 'cancelled'];
const EXPENSE_STATUSES = ['paid', 'paid', 'approved', 'pending', 'rejected', 'cancelled'];
const TITLES = ['Taxi', 'Client dinner', 'Hotel night', 'Yakıt', 'Office chairs'];
const MERCHANTS = ['Yellow Cab', 'Çiya Sofrası', 'Hôtel Étoile', 'Petrol Ofisi', 'IKEA'];
const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

type Row = Record<string, unknown> & { id: number };

const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Company 1's long lists, company 2's short ones, ids interleaved. */
function records(seed: number) {
  const rng = mulberry32(seed);
  const day = () => Math.floor(rng() * 700);
  const out: Row[] = [];
  out.push(company(1) as Row, company(2) as Row);
  for (const c of [1, 2]) {
    for (let e = 1; e <= 30; e++) out.push(employee(c, c * 1000 + e) as Row);
    for (let t = 1; t <= 3; t++) {
      out.push(leaveType(c, c * 10 + t) as Row, category(c, c * 10 + t) as Row);
    }
  }
  for (let i = 0; i < COUNT; i++) {
    const c = i % 40 === 7 ? 2 : 1;
    const id = i + 1;
    const start = START + day() * DAY;
    const created = start - Math.floor(rng() * 30) * DAY;
    out.push(
      leave(c, id, c * 1000 + 1 + (i % 30), c * 10 + 1 + (i % 3), {
        status: pick(rng, LEAVE_STATUSES),
        start_date: date(start),
        end_date: date(start + Math.floor(rng() * 10) * DAY),
        created_at: stamp(created + Math.floor(rng() * 86_400) * 1000),
        updated_at: stamp(created + day() * DAY),
      }) as Row,
      expense(c, id, c * 1000 + 1 + ((i * 7) % 30), c * 10 + 1 + ((i * 5) % 3), {
        status: pick(rng, EXPENSE_STATUSES),
        title: pick(rng, TITLES),
        merchant_name: pick(rng, MERCHANTS),
        amount: (1 + Math.floor(rng() * 5000) / 100).toFixed(2),
        expense_date: date(START + day() * DAY),
        created_at: stamp(start),
        updated_at: stamp(start + day() * DAY),
      }) as Row,
    );
  }
  return out;
}

/** The ids in the API's order: the sort key, then the id, both in the given direction. */
function sortedIds(rows: Row[], key: (row: Row) => string | number, direction: 1 | -1): number[] {
  return [...rows]
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) return (ka < kb ? -1 : 1) * direction;
      return (a.id - b.id) * direction;
    })
    .map((row) => row.id);
}

const SORT_KEYS: Record<string, (row: Row) => string | number> = {
  id: (r) => r.id,
  start_date: (r) => r.start_date as string,
  end_date: (r) => r.end_date as string,
  created_at: (r) => r.created_at as string,
  updated_at: (r) => r.updated_at as string,
  expense_date: (r) => r.expense_date as string,
  amount: (r) => Math.round(Number(r.amount) * 100),
};

/** Pages at the start, around sample and anchor boundaries, in the middle and at the end. */
const PAGES: Array<[perPage: number, page: number]> = [
  [100, 1],
  [7, 143],
  [33, 31],
  [100, 101],
  [100, 150],
  [25, 571],
  [100, 213],
];

async function checkList(
  api: TestApi,
  key: string,
  path: string,
  rows: Row[],
  keep: (row: Row) => boolean,
  sorts: string[],
): Promise<number> {
  const kept = rows.filter(keep);
  for (const field of sorts) {
    for (const direction of [1, -1] as const) {
      const expected = sortedIds(
        kept,
        SORT_KEYS[field] as (row: Row) => string | number,
        direction,
      );
      const sort = direction === 1 ? field : `-${field}`;
      for (const [perPage, page] of PAGES) {
        const url = `${path}${path.includes('?') ? '&' : '?'}sort=${sort}&per_page=${perPage}&page=${page}`;
        const res = await api.get(url, key);
        assert.equal(res.status, 200, `${url}: ${res.body}`);
        const offset = (page - 1) * perPage;
        assert.deepEqual(
          res.json.data.map((r: { id: number }) => r.id),
          expected.slice(offset, offset + perPage),
          url,
        );
        assert.equal(res.json.meta.total, kept.length, url);
      }
    }
  }
  return kept.length;
}

describeEachDialect('long lists', (dialect) => {
  it('give every filter, sort and page the rows and total of the whole list sorted', async (t) => {
    const all = records(20261124);
    const api = await useApi(t, dialect, { records: all });
    const key = await api.createKey(1);
    const mine = (type: string) => all.filter((r) => r.type === type && r.company_id === 1);
    const leaves = mine('leave');
    const expenses = mine('expense');
    const leaveSorts = ['id', 'start_date', 'end_date', 'created_at', 'updated_at'];
    const expenseSorts = ['id', 'expense_date', 'amount', 'created_at', 'updated_at'];

    const sets = await api.handle.db
      .selectFrom('list_sample_sets')
      .select(['company_id', 'list'])
      .orderBy('list')
      .execute();
    assert.deepEqual(
      sets.map((s) => [Number(s.company_id), s.list]),
      [
        [1, 'expenses'],
        [1, 'leaves'],
      ],
      'company 1 has samples, company 2 (short lists) none',
    );

    // From the samples: statuses and groups, in every order.
    const broad = await checkList(api, key, '/leaves', leaves, () => true, leaveSorts);
    assert.ok(broad > GATHER_LIMIT);
    await checkList(
      api,
      key,
      '/leaves?status=pending,cancelled',
      leaves,
      (r) => ['pending', 'cancelled'].includes(r.status as string),
      leaveSorts,
    );
    await checkList(
      api,
      key,
      '/leaves?leave_type_id=12&status=approved',
      leaves,
      (r) => r.leave_type_id === 12 && r.status === 'approved',
      ['start_date', 'updated_at'],
    );
    await checkList(
      api,
      key,
      '/expenses?status=paid,rejected&category_id=11,13',
      expenses,
      (r) =>
        ['paid', 'rejected'].includes(r.status as string) &&
        [11, 13].includes(r.category_id as number),
      expenseSorts,
    );

    // Totals from the samples' date counts; pages walked or gathered.
    const from = '2024-06-01';
    const to = '2024-08-31';
    await checkList(
      api,
      key,
      `/leaves?from=${from}&to=${to}`,
      leaves,
      (r) => (r.start_date as string) <= to && (r.end_date as string) >= from,
      leaveSorts,
    );
    const sinceFrom = await checkList(
      api,
      key,
      `/leaves?from=${from}&status=approved`,
      leaves,
      (r) => (r.end_date as string) >= from && r.status === 'approved',
      ['id', 'end_date', 'created_at'],
    );
    assert.ok(sinceFrom < broad);
    await checkList(
      api,
      key,
      `/expenses?from=${from}&to=${to}&status=pending`,
      expenses,
      (r) =>
        (r.expense_date as string) >= from &&
        (r.expense_date as string) <= to &&
        r.status === 'pending',
      expenseSorts,
    );
    const wide = await checkList(
      api,
      key,
      '/expenses?to=2025-11-25',
      expenses,
      (r) => (r.expense_date as string) <= '2025-11-25',
      ['amount', 'created_at'],
    );
    assert.ok(wide > GATHER_LIMIT, 'a selective filter with more matches than are gathered');
    // Windows and `updated_since` whose dates fall inside a month: their pages start from the
    // samples' month counts, less or plus the rows of the shorter part of each edge month.
    for (const [first, last] of [
      ['2024-06-10', '2024-08-05'],
      ['2024-02-27', '2024-09-24'],
    ] as const) {
      await checkList(
        api,
        key,
        `/leaves?from=${first}&to=${last}`,
        leaves,
        (r) => (r.start_date as string) <= last && (r.end_date as string) >= first,
        ['id', 'created_at', 'updated_at'],
      );
      await checkList(
        api,
        key,
        `/expenses?from=${first}&to=${last}&status=paid,pending`,
        expenses,
        (r) =>
          (r.expense_date as string) >= first &&
          (r.expense_date as string) <= last &&
          ['paid', 'pending'].includes(r.status as string),
        ['id', 'amount', 'created_at', 'updated_at'],
      );
    }
    // Dates before the first month counted and after the last.
    await checkList(
      api,
      key,
      '/leaves?from=2001-03-15&status=pending',
      leaves,
      (r) => r.status === 'pending',
      ['created_at'],
    );
    await checkList(
      api,
      key,
      '/expenses?to=2099-12-31&status=paid',
      expenses,
      (r) => r.status === 'paid',
      ['updated_at'],
    );
    for (const late of ['2024-10-25T12:00:00Z', '2025-01-03T06:30:00Z']) {
      await checkList(
        api,
        key,
        `/expenses?updated_since=${late}&status=approved,rejected,paid`,
        expenses,
        (r) =>
          (r.updated_at as string) >= late &&
          ['approved', 'rejected', 'paid'].includes(r.status as string),
        ['id', 'expense_date', 'created_at'],
      );
    }
    const since = '2024-09-15T00:00:00Z';
    await checkList(
      api,
      key,
      `/leaves?updated_since=${since}`,
      leaves,
      (r) => (r.updated_at as string) >= since,
      leaveSorts,
    );
    await checkList(
      api,
      key,
      `/expenses?updated_since=${since}&category_id=12`,
      expenses,
      (r) => (r.updated_at as string) >= since && r.category_id === 12,
      ['id', 'updated_at', 'amount'],
    );

    // Counted by the database: a window with updated_since, named employees, searches.
    await checkList(
      api,
      key,
      `/leaves?from=${from}&to=${to}&updated_since=${since}`,
      leaves,
      (r) =>
        (r.start_date as string) <= to &&
        (r.end_date as string) >= from &&
        (r.updated_at as string) >= since,
      ['id', 'created_at'],
    );
    await checkList(
      api,
      key,
      '/expenses?employee_id=1003,1017',
      expenses,
      (r) => [1003, 1017].includes(r.employee_id as number),
      ['id', 'amount'],
    );
    const searched = (text: string) => (r: Row) =>
      fold(r.title as string).includes(fold(text)) ||
      fold(r.merchant_name as string).includes(fold(text));
    for (const text of ['otel', 'Ç', 'ay', 'xq', 'Ofisi']) {
      await checkList(
        api,
        key,
        `/expenses?search=${encodeURIComponent(text)}`,
        expenses,
        searched(text),
        ['id', 'amount'],
      );
    }
    await checkList(
      api,
      key,
      '/expenses?search=taxi&status=paid',
      expenses,
      (r) => searched('taxi')(r) && r.status === 'paid',
      ['expense_date'],
    );
    // Read by their texts (with statuses and categories), or with a filter of its own index.
    await checkList(
      api,
      key,
      '/expenses?search=otel&category_id=11,13',
      expenses,
      (r) => searched('otel')(r) && [11, 13].includes(r.category_id as number),
      ['created_at', 'updated_at'],
    );
    await checkList(
      api,
      key,
      '/expenses?search=cab&employee_id=1003,1017',
      expenses,
      (r) => searched('cab')(r) && [1003, 1017].includes(r.employee_id as number),
      ['amount'],
    );

    // An import that changes statuses makes the samples again for the new data version.
    const changed = leaves.slice(0, 3000).map((r) => ({ ...r, status: 'cancelled' }));
    await api.load([company(1), ...changed]);
    const byId = new Map(changed.map((r) => [r.id, r]));
    const current = leaves.map((r) => byId.get(r.id) ?? r);
    await checkList(
      api,
      key,
      '/leaves?status=cancelled',
      current,
      (r) => r.status === 'cancelled',
      ['id', 'updated_at'],
    );
  });
});

describeEachDialect('long lists walked from the bounds of their matches', (dialect) => {
  it('give the rows of the whole list sorted, whether the bounds were probed or gathered', async (t) => {
    // Leaves created the day before they start: a window's matches bunch up at one end of
    // the created_at order, where a short walk from the other end finds none of them and the
    // matches are gathered for their bounds; in id order (ids not following the dates) the
    // walk from either end meets a match at once.
    const count = SAMPLED_MIN_ROWS + 7_000;
    const rows = leavesCreatedTheDayBefore(
      1,
      1001,
      11,
      count,
      START,
      mulberry32(20261125),
    ) as Row[];
    const api = await useApi(t, dialect, {
      records: [company(1), employee(1, 1001), leaveType(1, 11), ...rows],
    });
    const key = await api.createKey(1);
    const from = date(START + 150 * DAY);
    const kept = await checkList(
      api,
      key,
      `/leaves?from=${from}`,
      rows,
      (r) => (r.end_date as string) >= from,
      ['created_at', 'id'],
    );
    assert.ok(kept > GATHER_LIMIT, 'walked, not gathered');
    assert.ok(
      count - kept > 5 * SAMPLE_INTERVAL,
      'the first samples in created_at order match none',
    );
  });
});

describeEachDialect('long lists whose samples have no month counts', (dialect) => {
  it('read windows and updated_since as before (samples made before migration 0013)', async (t) => {
    const all = records(20261129);
    const api = await useApi(t, dialect, { records: all });
    const key = await api.createKey(1);
    const deleted = await api.handle.db.deleteFrom('list_sample_months').executeTakeFirst();
    assert.ok(Number(deleted.numDeletedRows) > 0);
    const mine = (type: string) => all.filter((r) => r.type === type && r.company_id === 1);
    const from = '2024-06-10';
    const to = '2024-09-30';
    await checkList(
      api,
      key,
      `/leaves?from=${from}&to=${to}&status=approved,pending`,
      mine('leave'),
      (r) =>
        (r.start_date as string) <= to &&
        (r.end_date as string) >= from &&
        ['approved', 'pending'].includes(r.status as string),
      ['id', 'created_at'],
    );
    const since = '2024-10-25T12:00:00Z';
    await checkList(
      api,
      key,
      `/expenses?updated_since=${since}`,
      mine('expense'),
      (r) => (r.updated_at as string) >= since,
      ['amount'],
    );
  });
});

describeEachDialect('long lists dated at the end of the stored range', (dialect) => {
  it('read windows and updated_since in December 9999 from the month counts', async (t) => {
    // Leaves of October to December 9999: a window's or updated_since's edge month is the
    // last a stored date can be in, with no next month to bound it.
    const rng = mulberry32(20261130);
    const october = Date.UTC(9999, 9, 1);
    const rows: Row[] = [];
    for (let i = 0; i < COUNT; i++) {
      const start = october + Math.floor(rng() * 88) * DAY;
      const created = october + Math.floor(rng() * 90) * DAY + Math.floor(rng() * 86_400) * 1000;
      rows.push(
        leave(1, i + 1, 1001, 11, {
          status: pick(rng, LEAVE_STATUSES),
          start_date: date(start),
          end_date: date(start + Math.floor(rng() * 4) * DAY),
          created_at: stamp(created),
          updated_at: stamp(created + Math.floor(rng() * 86_400) * 1000),
        }) as Row,
      );
    }
    const api = await useApi(t, dialect, {
      records: [company(1), employee(1, 1001), leaveType(1, 11), ...rows],
    });
    const key = await api.createKey(1);
    await checkList(
      api,
      key,
      '/leaves?from=9999-12-20',
      rows,
      (r) => (r.end_date as string) >= '9999-12-20',
      ['id', 'created_at'],
    );
    await checkList(
      api,
      key,
      '/leaves?to=9999-12-25&status=approved',
      rows,
      (r) => (r.start_date as string) <= '9999-12-25' && r.status === 'approved',
      ['id', 'updated_at'],
    );
    // The last day there is: the end dates' bound it implies (plus the longest leave) is not.
    await checkList(
      api,
      key,
      '/leaves?from=9999-11-15&to=9999-12-31',
      rows,
      (r) => (r.end_date as string) >= '9999-11-15',
      ['id', 'end_date'],
    );
    const since = '9999-12-20T00:00:00Z';
    await checkList(
      api,
      key,
      `/leaves?updated_since=${since}`,
      rows,
      (r) => (r.updated_at as string) >= since,
      ['id', 'start_date'],
    );
  });
});
