import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fold } from '../../src/fold.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { category, company, employee, expense } from '../helpers/records.ts';

/**
 * An expense search within a window or `updated_since` is read through the texts' own indexes,
 * which carry the dates, when few enough texts contain it; by testing the rows in its bounds
 * when those are fewer than the rows of its texts over a ratio, or when more texts contain it
 * (`expenseListQueries`, src/db/expense-lists.ts). Every way must count, and page, what testing
 * every row finds.
 */
const DAY = 86_400_000;
const dayOf = (start: string, days: number) =>
  new Date(Date.parse(start) + days * DAY).toISOString().slice(0, 10);
const STATUSES = ['pending', 'approved', 'paid', 'rejected'] as const;
const MERCHANTS = ['Yellow Cab', 'IKEA', 'Çiya Sofrası', 'Migros'];

describeEachDialect('searches within date bounds', (dialect) => {
  it('count and page what testing every row finds, by whichever index', async (t) => {
    const expenses = Array.from({ length: 700 }, (_, i) =>
      expense(1, i + 1, 1, 1 + (i % 2), {
        // 600 distinct titles contain "rip": more texts than a count names (COUNTED_TEXTS).
        title: i < 600 ? `Trip ${i + 1}` : 'Client dinner',
        merchant_name: MERCHANTS[(i * 7) % MERCHANTS.length],
        status: STATUSES[i % STATUSES.length],
        expense_date: dayOf('2025-01-01', i),
        updated_at: `${dayOf('2025-01-01', (i * 37) % 700)}T10:00:00Z`,
        created_at: `${dayOf('2024-12-01', (i * 11) % 700)}T09:00:00Z`,
        amount: `${(i * 53) % 400}.25`,
        tax_amount: '0.00',
        items: [],
      }),
    );
    // Another company's expenses carry every text and date too: none may count.
    const theirs = expenses.map((e) => ({
      ...e,
      company_id: 2,
      id: e.id + 1000,
      employee_id: 2,
      category_id: 3,
    }));
    const api = await useApi(t, dialect, {
      records: [
        company(1),
        company(2),
        employee(1, 1),
        employee(2, 2),
        category(1, 1),
        category(1, 2),
        category(2, 3),
        ...expenses,
        ...theirs,
      ],
    });
    const apiKey = await api.createKey(1);
    type Bounds = { from?: string; to?: string; updatedSince?: string; status?: string };
    const cases: [string, Bounds][] = [
      // "cab" (a quarter of the rows) in a quarter's window: through the texts' indexes.
      ['cab', { from: '2025-04-01', to: '2025-06-30' }],
      ['cab', { updatedSince: '2025-09-01T00:00:00Z' }],
      ['cab', { updatedSince: '2025-09-01T00:00:00Z', status: 'approved,paid' }],
      ['y', { from: '2025-02-10', to: '2026-03-01', updatedSince: '2025-06-01T12:00:00Z' }],
      // A day's window holds fewer rows than the matches over the ratio: its rows are tested.
      ['cab', { from: '2025-03-09', to: '2025-03-09' }],
      ['a', { from: '2025-03-09', to: '2025-03-12' }],
      // More texts contain "rip" and "ri" than a count names: the rows in the bounds are tested.
      ['rip', { from: '2025-05-01', to: '2025-12-31' }],
      ['ri', { updatedSince: '2026-01-01T00:00:00Z', status: 'pending' }],
      ['rip 1', { updatedSince: '2025-03-01T00:00:00Z' }],
      // No text contains it.
      ['zz', { from: '2025-01-01' }],
      ['SOFRA', { to: '2025-08-01' }],
    ];
    // Every order: a walk from a filter's bound on the sort column reads that column's index.
    const sorts = ['id', '-id', 'expense_date', '-expense_date', 'updated_at', '-updated_at'];
    sorts.push('amount', '-amount', 'created_at', '-created_at');
    const sortKey = {
      id: (e: Record<string, unknown>) => e.id as number,
      expense_date: (e: Record<string, unknown>) => e.expense_date as string,
      updated_at: (e: Record<string, unknown>) => e.updated_at as string,
      amount: (e: Record<string, unknown>) => Number.parseFloat(e.amount as string),
      created_at: (e: Record<string, unknown>) => e.created_at as string,
    };
    for (const [[search, bounds], sort] of cases.flatMap((c) =>
      sorts.map((o) => [c, o] as const),
    )) {
      const statuses = bounds.status?.split(',');
      const descending = sort.startsWith('-');
      const key = sortKey[sort.replace('-', '') as keyof typeof sortKey];
      const expected = expenses
        .filter(
          (e) =>
            (fold(e.title as string).includes(fold(search)) ||
              fold(e.merchant_name as string).includes(fold(search))) &&
            (!bounds.from || (e.expense_date as string) >= bounds.from) &&
            (!bounds.to || (e.expense_date as string) <= bounds.to) &&
            (!bounds.updatedSince || (e.updated_at as string) >= bounds.updatedSince) &&
            (!statuses || statuses.includes(e.status as string)),
        )
        .sort((a, b) => {
          const [x, y] = [key(a), key(b)];
          const order = x < y ? -1 : x > y ? 1 : a.id - b.id;
          return descending ? -order : order;
        })
        .map((e) => e.id);
      const query = [
        `search=${encodeURIComponent(search)}`,
        bounds.from && `from=${bounds.from}`,
        bounds.to && `to=${bounds.to}`,
        bounds.updatedSince && `updated_since=${bounds.updatedSince}`,
        bounds.status && `status=${bounds.status}`,
        `sort=${sort}`,
      ]
        .filter(Boolean)
        .join('&');
      const found: number[] = [];
      for (let page = 1; ; page++) {
        const res = await api.get(`/expenses?${query}&per_page=100&page=${page}`, apiKey);
        assert.equal(res.status, 200, res.body);
        assert.equal(res.json.meta.total, expected.length, query);
        found.push(...res.json.data.map((e: { id: number }) => e.id));
        if (page >= res.json.meta.last_page) break;
      }
      assert.deepEqual(found, expected, query);
    }
  });
});
