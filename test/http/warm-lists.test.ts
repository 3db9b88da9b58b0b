import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setCompanyActive } from '../../src/db/companies.queries.ts';
import { SAMPLED_MIN_ROWS } from '../../src/db/sampled-lists.ts';
import { mulberry32 } from '../../src/demo/random.ts';
import { formatTimestamp } from '../../src/time.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leavesCreatedTheDayBefore,
  leaveType,
  smallCompany,
} from '../helpers/records.ts';

const START = Date.UTC(2024, 0, 1);

/** Company 1 with leaves enough for samples (`long`), one employee, one expense. */
function longCompany() {
  const long = leavesCreatedTheDayBefore(1, 1001, 11, SAMPLED_MIN_ROWS, START, mulberry32(7));
  const records = [
    company(1),
    employee(1, 1001),
    leaveType(1, 11),
    ...long,
    category(1, 12),
    expense(1, 13, 1001, 12),
  ];
  return { long, records };
}

/**
 * Before it listens, the service reads the lists of the companies whose lists have samples, and
 * of those whose keys were used in the last day (src/http/warm-lists.ts): their first pages
 * after a restart then find the samples and the employees loaded.
 */
describeEachDialect('the lists read before listening', (dialect) => {
  it('are those of the active companies with long lists, and change no page', async (t) => {
    const { long, records } = longCompany();
    const api = await useApi(t, dialect, {
      records: [
        ...records,
        company(2),
        employee(2, 2001),
        leaveType(2, 21),
        leave(2, SAMPLED_MIN_ROWS + 1, 2001, 21),
      ],
    });
    const warm = api.app.warmLists;
    assert.ok(warm, 'the app sets warmLists');
    // Company 2's one leave has no samples; company 1's one employee is held for its pages.
    // Company 1's lists are read once with each kind of filter, from values of its own data.
    assert.deepEqual(await warm(), { companies: [1], filteredPages: 31, employees: 1 });
    // What the filtered reads counted and cached, the requests after them answer the same:
    // every leave of company 1 is approved, and its employee's name holds the search.
    const key = await api.createKey(1);
    const name = String(employee(1, 1001).first_name).slice(0, 3);
    for (const path of [
      `/leaves?search=${encodeURIComponent(name)}&per_page=1`,
      '/leaves?status=approved&per_page=1',
      '/leaves?status=pending&per_page=1',
    ]) {
      const filtered = await api.get(path, key);
      assert.equal(filtered.status, 200);
      const total = path.includes('pending') ? 0 : SAMPLED_MIN_ROWS;
      assert.equal((filtered.json as { meta: { total: number } }).meta.total, total, path);
    }

    // The pages read after it are the whole list's, sorted.
    const res = await api.get('/leaves?sort=-end_date&per_page=3&page=2', key);
    assert.equal(res.status, 200);
    const expected = [...long]
      .sort(
        (a, b) =>
          String(b.end_date).localeCompare(String(a.end_date)) || Number(b.id) - Number(a.id),
      )
      .slice(3, 6)
      .map((row) => row.id);
    const { data, meta } = res.json as { data: Array<{ id: number }>; meta: { total: number } };
    assert.deepEqual(
      data.map((row) => row.id),
      expected,
    );
    assert.equal(meta.total, SAMPLED_MIN_ROWS);

    // A deactivated company's lists are nobody's to read.
    await setCompanyActive(api.handle.db, 1, false);
    assert.deepEqual((await warm()).companies, []);
  });
  it('and those of the companies whose unrevoked keys were used in the last day', async (t) => {
    // Each one's records with ids past company 1's leaves.
    const small = [2, 3, 4, 5, 6].flatMap((companyId) =>
      smallCompany(companyId, companyId * 100_000),
    );
    const api = await useApi(t, dialect, { records: [...longCompany().records, ...small] });
    const hoursAgo = (hours: number) => formatTimestamp(new Date(Date.now() - hours * 3600_000));
    const used = async (companyId: number, lastUsedAt: string, revokedAt: string | null) => {
      await api.createKey(companyId);
      await api.handle.db
        .updateTable('api_keys')
        .set({ last_used_at: lastUsedAt, revoked_at: revokedAt })
        .where('company_id', '=', companyId)
        .execute();
    };
    await used(2, hoursAgo(5), null);
    await used(3, hoursAgo(1), null);
    await used(4, hoursAgo(25), null); // over a day ago
    await used(5, hoursAgo(1), hoursAgo(0.5)); // revoked since
    await used(6, hoursAgo(2), null);
    await setCompanyActive(api.handle.db, 6, false);
    await api.createKey(1); // never used

    const warm = api.app.warmLists;
    assert.ok(warm, 'the app sets warmLists');
    // The longest first, then the last called; each one's employee held for its pages.
    assert.deepEqual(await warm(), { companies: [1, 3, 2], filteredPages: 31, employees: 3 });
  });
});
