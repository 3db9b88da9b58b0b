import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ApiResponse, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { insufficientScope, NOT_FOUND, validationFailed } from '../helpers/problems.ts';
import { NOT_PLAIN_NUMBERS } from '../helpers/query-values.ts';
import { company, employee, leave, leaveType, smallCompany } from '../helpers/records.ts';

/**
 * GET /leaves, GET /leaves/{id} and GET /leave-types: docs/api.md "Resources and their fields"
 * and "Ordering, filters and search" (filters, search folding, sort, pagination, 422/404/403
 * problem bodies).
 */

type Fields = Record<string, unknown>;

/** Company 1 with one employee and one leave type, plus the records a test adds. */
const acme = (...records: Fields[]): Fields[] => [
  company(1),
  employee(1, 1),
  leaveType(1, 1),
  ...records,
];

const ids = (res: ApiResponse): number[] => res.json.data.map((item: { id: number }) => item.id);

const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** The message each query parameter's 422 entry carries (src/schemas/common.ts). */
const MESSAGES = {
  status: 'must be a comma-separated list of: pending, approved, rejected, cancelled',
  id: 'must be a positive integer id or a comma-separated list of up to 100, in plain decimal digits without spaces',
  idPastSafe: 'must hold ids of at most 9007199254740991',
  date: 'must be a real calendar date YYYY-MM-DD',
  sort: 'must be one of id, start_date, end_date, created_at, updated_at, each optionally prefixed with -',
  page: 'must be an integer from 1 to 9007199254740991 in plain decimal digits',
  per_page: 'must be an integer from 1 to 100 in plain decimal digits',
  search: 'must be at most 100 characters',
  updated_since: 'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z',
  updated_since_range: 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z',
};

const summary = (id: number, fullName: string, number = `E-${id}`, department = 'Finance') => ({
  id,
  employee_number: number,
  full_name: fullName,
  department,
});

describeEachDialect('GET /leaves', (dialect) => {
  describe('shape', () => {
    it('lists every field of a leave, with the employee, leave type and substitute embedded', async (t) => {
      const api = await useApi(t, dialect, {
        records: [
          company(1),
          employee(1, 1),
          employee(1, 2, {
            employee_number: 'HR-0042',
            first_name: 'Hans',
            last_name: 'Müller',
            department: 'People',
          }),
          leaveType(1, 1),
          leaveType(1, 2, { name: 'Unpaid leave', type_key: 'unpaid' }),
          leave(1, 1, 1, 1, {
            status: 'pending',
            start_date: '2026-03-02',
            end_date: '2026-03-04',
            days: 3,
            reason: 'Family visit',
            approved_at: null,
          }),
          leave(1, 2, 1, 2, {
            status: 'approved',
            start_date: '2026-04-10',
            end_date: '2026-04-10',
            days: 0.25,
            duration_type: 'hourly',
            start_time: '09:00',
            end_time: '11:30',
            hours: 2.5,
            substitute_employee_id: 2,
            // Offsets and fractions are served as UTC, whole seconds.
            approved_at: '2026-04-01T12:15:00+03:00',
            created_at: '2026-03-31T23:30:00-02:00',
            updated_at: '2026-04-01T09:15:00.000Z',
          }),
          leave(1, 3, 2, 1, {
            status: 'rejected',
            start_date: '2026-05-04',
            end_date: '2026-05-04',
            days: 0.5,
            duration_type: 'half_day',
            rejection_reason: 'Busy week',
          }),
          ...smallCompany(2, 100),
        ],
      });
      const key = await api.createKey(1);
      const res = await api.get('/leaves', key);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.deepEqual(res.json, {
        data: [
          {
            id: 1,
            status: 'pending',
            employee: summary(1, 'Ayşe Yılmaz'),
            leave_type: { id: 1, name: 'Annual leave', type_key: 'annual' },
            start_date: '2026-03-02',
            end_date: '2026-03-04',
            days: 3,
            duration_type: 'full_day',
            start_time: null,
            end_time: null,
            hours: null,
            reason: 'Family visit',
            rejection_reason: null,
            substitute_employee: null,
            approved_at: null,
            created_at: '2026-02-19T08:00:00Z',
            updated_at: '2026-02-20T08:00:00Z',
          },
          {
            id: 2,
            status: 'approved',
            employee: summary(1, 'Ayşe Yılmaz'),
            leave_type: { id: 2, name: 'Unpaid leave', type_key: 'unpaid' },
            start_date: '2026-04-10',
            end_date: '2026-04-10',
            days: 0.25,
            duration_type: 'hourly',
            start_time: '09:00',
            end_time: '11:30',
            hours: 2.5,
            reason: null,
            rejection_reason: null,
            substitute_employee: summary(2, 'Hans Müller', 'HR-0042', 'People'),
            approved_at: '2026-04-01T09:15:00Z',
            created_at: '2026-04-01T01:30:00Z',
            updated_at: '2026-04-01T09:15:00Z',
          },
          {
            id: 3,
            status: 'rejected',
            employee: summary(2, 'Hans Müller', 'HR-0042', 'People'),
            leave_type: { id: 1, name: 'Annual leave', type_key: 'annual' },
            start_date: '2026-05-04',
            end_date: '2026-05-04',
            days: 0.5,
            duration_type: 'half_day',
            start_time: null,
            end_time: null,
            hours: null,
            reason: null,
            rejection_reason: 'Busy week',
            substitute_employee: null,
            approved_at: '2026-02-20T08:00:00Z',
            created_at: '2026-02-19T08:00:00Z',
            updated_at: '2026-02-20T08:00:00Z',
          },
        ],
        meta: { current_page: 1, per_page: 25, total: 3, last_page: 1, from: 1, to: 3 },
      });
      assert.doesNotMatch(res.body, /medical|attachments|document/);
    });

    it('embeds an inactive leave type in the leaves that use it', async (t) => {
      const api = await useApi(t, dialect, {
        records: acme(
          leaveType(1, 2, { name: 'Old sick leave', type_key: 'sick_old', active: false }),
          leave(1, 1, 1, 2),
        ),
      });
      const key = await api.createKey(1);
      const expected = { id: 2, name: 'Old sick leave', type_key: 'sick_old' };
      const list = await api.get('/leaves', key);
      assert.deepEqual(list.json.data[0].leave_type, expected);
      const one = await api.get('/leaves/1', key);
      assert.deepEqual(one.json.data.leave_type, expected);
    });
  });

  describe('filters', () => {
    it('filters by one status and by a comma-separated list with spaces', async (t) => {
      const api = await useApi(t, dialect, {
        records: acme(
          leave(1, 1, 1, 1, { status: 'approved' }),
          leave(1, 2, 1, 1, { status: 'pending', approved_at: null }),
          leave(1, 3, 1, 1, { status: 'rejected', approved_at: null }),
          leave(1, 4, 1, 1, { status: 'cancelled' }),
        ),
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['approved', [1]],
        ['pending', [2]],
        ['rejected', [3]],
        ['cancelled', [4]],
        ['approved,pending', [1, 2]],
        [encodeURIComponent(' rejected , cancelled '), [3, 4]],
        ['pending,approved,pending', [1, 2]],
        ['pending,approved,rejected,cancelled', [1, 2, 3, 4]],
      ];
      for (const [status, expected] of cases) {
        const res = await api.get(`/leaves?status=${status}`, key);
        assert.equal(res.status, 200, `status=${status}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `status=${status}`);
        assert.equal(res.json.meta.total, expected.length, `status=${status}`);
      }
    });

    it('filters by one employee_id or leave_type_id and by comma-separated lists', async (t) => {
      const api = await useApi(t, dialect, {
        records: [
          company(1),
          employee(1, 1),
          employee(1, 2),
          employee(1, 3),
          leaveType(1, 1),
          leaveType(1, 2, { type_key: 'sick' }),
          leaveType(1, 3, { type_key: 'unpaid' }),
          leave(1, 1, 1, 1),
          leave(1, 2, 2, 2),
          leave(1, 3, 3, 3),
          leave(1, 4, 1, 3),
          ...smallCompany(2, 100),
        ],
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['employee_id=1', [1, 4]],
        ['employee_id=2', [2]],
        ['employee_id=2,3', [2, 3]],
        ['employee_id=1,1', [1, 4]],
        // Leading zeros are digits, as in per_page=05.
        ['employee_id=02,0003', [2, 3]],
        ['employee_id=99', []],
        ['employee_id=9007199254740991', []],
        // Another company's employee is no filter into its data.
        ['employee_id=101', []],
        ['leave_type_id=3', [3, 4]],
        ['leave_type_id=1,2', [1, 2]],
        ['leave_type_id=101', []],
        ['employee_id=1&leave_type_id=3', [4]],
        ['employee_id=2,3&leave_type_id=1,3', [3]],
      ];
      for (const [query, expected] of cases) {
        const res = await api.get(`/leaves?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
        assert.deepEqual(ids(res), expected, query);
        assert.equal(res.json.meta.total, expected.length, query);
      }
    });

    it('accepts up to 100 ids in a list', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const hundred = Array.from({ length: 100 }, (_, i) => 100 - i).join(',');
      const res = await api.get(`/leaves?employee_id=${hundred}&leave_type_id=${hundred}`, key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(ids(res), [1]);
    });

    it('filters by a date range that intersects the leave', async (t) => {
      const api = await useApi(t, dialect, {
        records: acme(
          leave(1, 1, 1, 1, { start_date: '2026-03-02', end_date: '2026-03-04' }),
          leave(1, 2, 1, 1, { start_date: '2026-02-20', end_date: '2026-02-27' }),
          leave(1, 3, 1, 1, { start_date: '2026-03-10', end_date: '2026-03-12' }),
          leave(1, 4, 1, 1, { start_date: '2026-02-01', end_date: '2026-03-31' }),
        ),
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        // Only from: end_date >= from, inclusive at the leave's last day.
        ['from=2026-03-04', [1, 3, 4]],
        ['from=2026-03-05', [3, 4]],
        // Only to: start_date <= to, inclusive at the leave's first day.
        ['to=2026-03-02', [1, 2, 4]],
        ['to=2026-03-01', [2, 4]],
        // Both: start_date <= to AND end_date >= from.
        ['from=2026-03-01&to=2026-03-05', [1, 4]],
        ['from=2026-03-03&to=2026-03-03', [1, 4]],
        ['from=2026-03-04&to=2026-03-10', [1, 3, 4]],
        ['from=2026-02-25&to=2026-03-02', [1, 2, 4]],
        ['from=2026-02-28&to=2026-03-01', [4]],
        ['from=2026-03-05&to=2026-03-09', [4]],
        ['from=2026-04-01&to=2026-04-30', []],
        ['from=2026-01-01&to=2026-12-31', [1, 2, 3, 4]],
        // The widest bounds an integrator sends for "no limit": leave 4 is 59 days long, so
        // the bounds the query derives from them reach past the years 0001–9999.
        ['to=9999-12-31', [1, 2, 3, 4]],
        ['from=0001-01-01', [1, 2, 3, 4]],
        ['from=0001-01-01&to=9999-12-31', [1, 2, 3, 4]],
        ['from=2026-03-11&to=9999-12-31', [3, 4]],
      ];
      for (const [query, expected] of cases) {
        const res = await api.get(`/leaves?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
        assert.deepEqual(ids(res), expected, query);
        assert.equal(res.json.meta.total, expected.length, query);
      }
    });

    it('searches the employee name and number, case- and accent-insensitively', async (t) => {
      const api = await useApi(t, dialect, {
        records: [
          company(1),
          employee(1, 1, { first_name: 'Ayşe', last_name: 'Yılmaz', employee_number: 'TR-0007' }),
          employee(1, 2, { first_name: 'Hans', last_name: 'Müller', employee_number: 'DE-0042' }),
          employee(1, 3, {
            first_name: 'Sébastien',
            last_name: 'Dupont',
            employee_number: 'FR-0100',
          }),
          employee(1, 4, { first_name: 'Ali', last_name: 'Kaya', employee_number: 'TR-0420' }),
          leaveType(1, 1),
          leave(1, 1, 1, 1),
          leave(1, 2, 2, 1),
          leave(1, 3, 3, 1),
          leave(1, 4, 4, 1),
          leave(1, 5, 1, 1),
          // Another company's Yılmaz never shows.
          company(2),
          employee(2, 101, { first_name: 'Mehmet', last_name: 'Yılmaz' }),
          leaveType(2, 101),
          leave(2, 101, 101, 101),
        ],
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['yilmaz', [1, 5]],
        ['YILMAZ', [1, 5]],
        ['Yılmaz', [1, 5]],
        ['YıLMAZ', [1, 5]],
        ['ayse yil', [1, 5]],
        ['AYŞE', [1, 5]],
        ['muller', [2]],
        ['MÜLLER', [2]],
        ['Mueller', []],
        ['sebastien', [3]],
        ['SÉBASTIEN', [3]],
        ['hans', [2]],
        ['0042', [2]],
        ['de-00', [2]],
        ['TR-0', [1, 4, 5]],
        ['042', [2, 4]],
        ['nobody', []],
        ['', [1, 2, 3, 4, 5]],
      ];
      for (const [search, expected] of cases) {
        const res = await api.get(`/leaves?search=${encodeURIComponent(search)}`, key);
        assert.equal(res.status, 200, `search=${search}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `search=${search}`);
        assert.equal(res.json.meta.total, expected.length, `search=${search}`);
      }
    });

    it('takes % and _ in a search literally', async (t) => {
      const api = await useApi(t, dialect, {
        records: [
          company(1),
          employee(1, 1, { last_name: 'Under_score', employee_number: 'A-1' }),
          employee(1, 2, { last_name: 'Underxscore', employee_number: 'A-2' }),
          employee(1, 3, { last_name: 'Per%cent', employee_number: 'A-3' }),
          employee(1, 4, { last_name: 'Perxcent', employee_number: 'A-4' }),
          employee(1, 5, { last_name: 'Back\\slash', employee_number: 'A-5' }),
          leaveType(1, 1),
          leave(1, 1, 1, 1),
          leave(1, 2, 2, 1),
          leave(1, 3, 3, 1),
          leave(1, 4, 4, 1),
          leave(1, 5, 5, 1),
        ],
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['_', [1]],
        ['r_s', [1]],
        ['%', [3]],
        ['r%c', [3]],
        ['\\', [5]],
        ['k\\s', [5]],
      ];
      for (const [search, expected] of cases) {
        const res = await api.get(`/leaves?search=${encodeURIComponent(search)}`, key);
        assert.equal(res.status, 200, `search=${search}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `search=${search}`);
      }
    });

    it('filters by updated_since, inclusive, with offsets normalised to UTC and fractions of a second rounded up', async (t) => {
      const api = await useApi(t, dialect, {
        records: acme(
          leave(1, 1, 1, 1, { updated_at: '2026-03-01T08:59:59Z' }),
          leave(1, 2, 1, 1, { updated_at: '2026-03-01T09:00:00Z' }),
          leave(1, 3, 1, 1, { updated_at: '2026-03-01T12:00:01+03:00' }),
          leave(1, 4, 1, 1, { updated_at: '2026-03-02T00:00:00Z' }),
        ),
      });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['2026-03-01T09:00:00Z', [2, 3, 4]],
        ['2026-03-01T12:00:00+03:00', [2, 3, 4]],
        ['2026-03-01T04:00:00-05:00', [2, 3, 4]],
        ['2026-03-01T09:00:01Z', [3, 4]],
        ['2026-03-01T08:59:59Z', [1, 2, 3, 4]],
        ['2026-03-02T02:00:00+02:00', [4]],
        ['2026-03-02T00:00:01Z', []],
        // Timestamps are whole seconds: a fraction past one excludes it, a zero one does not.
        ['2026-03-01T09:00:00.001Z', [3, 4]],
        ['2026-03-01T08:59:59.999999Z', [2, 3, 4]],
        ['2026-03-01T09:00:00.000Z', [2, 3, 4]],
        ['2026-03-01T11:59:59.5+03:00', [2, 3, 4]],
        ['9999-12-31T23:59:59.5Z', []],
      ];
      for (const [since, expected] of cases) {
        const res = await api.get(`/leaves?updated_since=${encodeURIComponent(since)}`, key);
        assert.equal(res.status, 200, `updated_since=${since}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `updated_since=${since}`);
        assert.equal(res.json.meta.total, expected.length, `updated_since=${since}`);
      }
    });

    it('combines every filter with AND', async (t) => {
      const match = {
        status: 'approved',
        start_date: '2026-03-02',
        end_date: '2026-03-04',
        updated_at: '2026-03-01T10:00:00Z',
      };
      const api = await useApi(t, dialect, {
        records: [
          company(1),
          employee(1, 1, { first_name: 'Ayşe', last_name: 'Yılmaz' }),
          employee(1, 2, { first_name: 'Ayla', last_name: 'Yılmaz' }),
          employee(1, 3, { first_name: 'Hans', last_name: 'Müller' }),
          leaveType(1, 1),
          leaveType(1, 2),
          leave(1, 1, 1, 1, match),
          leave(1, 2, 2, 1, { ...match, status: 'pending', approved_at: null }),
          leave(1, 3, 1, 1, { ...match, status: 'rejected' }),
          leave(1, 4, 3, 1, match),
          leave(1, 5, 1, 2, match),
          leave(1, 6, 1, 1, { ...match, start_date: '2026-03-20', end_date: '2026-03-21' }),
          leave(1, 7, 1, 1, { ...match, updated_at: '2026-02-28T10:00:00Z' }),
          leave(1, 8, 2, 1, { ...match, start_date: '2026-03-04', end_date: '2026-03-06' }),
        ],
      });
      const key = await api.createKey(1);
      const query = [
        'status=approved,pending',
        'employee_id=1,2,3',
        'leave_type_id=1',
        'from=2026-03-01',
        'to=2026-03-10',
        'search=yilmaz',
        'updated_since=2026-03-01T00:00:00Z',
        'sort=-id',
        'per_page=2',
      ].join('&');
      const res = await api.get(`/leaves?${query}`, key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(ids(res), [8, 2]);
      assert.deepEqual(res.json.meta, {
        current_page: 1,
        per_page: 2,
        total: 3,
        last_page: 2,
        from: 1,
        to: 2,
      });
      const next = await api.get(`/leaves?${query}&page=2`, key);
      assert.deepEqual(ids(next), [1]);
      assert.deepEqual(next.json.meta, {
        current_page: 2,
        per_page: 2,
        total: 3,
        last_page: 2,
        from: 3,
        to: 3,
      });
    });

    it('ignores unknown parameters', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves?colour=blue&status_id=x', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(ids(res), [1]);
    });
  });

  describe('sort', () => {
    // Every field has ties, and each field orders the five leaves differently. The file lists
    // them 3, 2, 1, 4, 5, so a missing tie-breaker shows; offsets are equal instants in UTC.
    const sortedLeaves = () =>
      [
        [3, '2026-03-09', '2026-04-05', '2026-02-01T09:00:00Z', '2026-02-15T09:00:00Z'],
        [2, '2026-03-01', '2026-04-09', '2026-02-09T09:00:00Z', '2026-02-15T12:00:00+03:00'],
        [1, '2026-03-09', '2026-04-01', '2026-02-05T12:00:00+03:00', '2026-02-11T09:00:00Z'],
        [4, '2026-03-05', '2026-04-01', '2026-02-09T09:00:00Z', '2026-02-19T06:00:00-03:00'],
        [5, '2026-03-01', '2026-04-09', '2026-02-01T09:00:00Z', '2026-02-11T09:00:00Z'],
      ].map(([id, start_date, end_date, created_at, updated_at]) =>
        leave(1, id as number, 1, 1, { start_date, end_date, created_at, updated_at }),
      );

    it('orders by id ascending by default', async (t) => {
      const api = await useApi(t, dialect, { records: acme(...sortedLeaves()) });
      const key = await api.createKey(1);
      assert.deepEqual(ids(await api.get('/leaves', key)), [1, 2, 3, 4, 5]);
    });

    it('sorts by each field both ways, with id as tie-breaker in the same direction', async (t) => {
      const api = await useApi(t, dialect, { records: acme(...sortedLeaves()) });
      const key = await api.createKey(1);
      const cases: [string, number[]][] = [
        ['id', [1, 2, 3, 4, 5]],
        ['-id', [5, 4, 3, 2, 1]],
        ['start_date', [2, 5, 4, 1, 3]],
        ['-start_date', [3, 1, 4, 5, 2]],
        ['end_date', [1, 4, 3, 2, 5]],
        ['-end_date', [5, 2, 3, 4, 1]],
        ['created_at', [3, 5, 1, 2, 4]],
        ['-created_at', [4, 2, 1, 5, 3]],
        ['updated_at', [1, 5, 2, 3, 4]],
        ['-updated_at', [4, 3, 2, 5, 1]],
      ];
      for (const [sort, expected] of cases) {
        const res = await api.get(`/leaves?sort=${sort}`, key);
        assert.equal(res.status, 200, `sort=${sort}: ${res.body}`);
        assert.deepEqual(ids(res), expected, `sort=${sort}`);
        // The order holds across pages.
        const pages: number[] = [];
        for (let page = 1; page <= 3; page += 1) {
          pages.push(...ids(await api.get(`/leaves?sort=${sort}&per_page=2&page=${page}`, key)));
        }
        assert.deepEqual(pages, expected, `sort=${sort}, paged`);
      }
    });
  });

  describe('pagination', () => {
    // 101 leaves, listed in the file in a shuffled order.
    const manyLeaves = () =>
      Array.from({ length: 101 }, (_, i) => ((i * 37) % 101) + 1).map((id) => leave(1, id, 1, 1));

    it('pages 25 at a time by default, ordered by id', async (t) => {
      const api = await useApi(t, dialect, { records: acme(...manyLeaves()) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves', key);
      assert.deepEqual(
        ids(res),
        Array.from({ length: 25 }, (_, i) => i + 1),
      );
      assert.deepEqual(res.json.meta, {
        current_page: 1,
        per_page: 25,
        total: 101,
        last_page: 5,
        from: 1,
        to: 25,
      });
      const last = await api.get('/leaves?page=5', key);
      assert.deepEqual(ids(last), [101]);
      assert.deepEqual(last.json.meta, {
        current_page: 5,
        per_page: 25,
        total: 101,
        last_page: 5,
        from: 101,
        to: 101,
      });
    });

    it('serves per_page 1 and per_page 100', async (t) => {
      const api = await useApi(t, dialect, { records: acme(...manyLeaves()) });
      const key = await api.createKey(1);
      const one = await api.get('/leaves?per_page=1&page=7', key);
      assert.deepEqual(ids(one), [7]);
      assert.deepEqual(one.json.meta, {
        current_page: 7,
        per_page: 1,
        total: 101,
        last_page: 101,
        from: 7,
        to: 7,
      });
      const hundred = await api.get('/leaves?per_page=100', key);
      assert.deepEqual(
        ids(hundred),
        Array.from({ length: 100 }, (_, i) => i + 1),
      );
      assert.deepEqual(hundred.json.meta, {
        current_page: 1,
        per_page: 100,
        total: 101,
        last_page: 2,
        from: 1,
        to: 100,
      });
      const second = await api.get('/leaves?per_page=100&page=2', key);
      assert.deepEqual(ids(second), [101]);
      assert.deepEqual(second.json.meta, {
        current_page: 2,
        per_page: 100,
        total: 101,
        last_page: 2,
        from: 101,
        to: 101,
      });
    });

    it('answers a page past the last with an empty data array', async (t) => {
      const api = await useApi(t, dialect, {
        records: acme(leave(1, 1, 1, 1), leave(1, 2, 1, 1), leave(1, 3, 1, 1)),
      });
      const key = await api.createKey(1);
      const last = await api.get('/leaves?per_page=2&page=2', key);
      assert.deepEqual(last.json, {
        data: [last.json.data[0]],
        meta: { current_page: 2, per_page: 2, total: 3, last_page: 2, from: 3, to: 3 },
      });
      assert.equal(last.json.data[0].id, 3);
      for (const page of [3, 1000000000, 9007199254740991]) {
        const past = await api.get(`/leaves?per_page=2&page=${page}`, key);
        assert.equal(past.status, 200, past.body);
        assert.deepEqual(past.json, {
          data: [],
          meta: { current_page: page, per_page: 2, total: 3, last_page: 2, from: null, to: null },
        });
      }
      // An employee's own leaves, read with their count: past the end too, at 2^53 − 1.
      for (const query of ['employee_id=1', 'employee_id=1,2&sort=-start_date']) {
        const past = await api.get(`/leaves?${query}&per_page=100&page=9007199254740991`, key);
        assert.equal(past.status, 200, past.body);
        assert.deepEqual(past.json.data, []);
      }
    });

    it('reports last_page 1 for an empty result', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves?status=cancelled', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        data: [],
        meta: { current_page: 1, per_page: 25, total: 0, last_page: 1, from: null, to: null },
      });
      const none = await api.get('/leaves?status=cancelled&page=2&per_page=10', key);
      assert.deepEqual(none.json, {
        data: [],
        meta: { current_page: 2, per_page: 10, total: 0, last_page: 1, from: null, to: null },
      });
    });
  });

  describe('invalid parameters', () => {
    const HUNDRED_AND_ONE = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    const cases: [string, string, string][] = [
      ['status=bogus', 'status', MESSAGES.status],
      ['status=Approved', 'status', MESSAGES.status],
      ['status=approved,', 'status', MESSAGES.status],
      ['status=,approved', 'status', MESSAGES.status],
      ['status=approved,,pending', 'status', MESSAGES.status],
      ['status=', 'status', MESSAGES.status],
      ['status=paid', 'status', MESSAGES.status],
      ['employee_id=0', 'employee_id', MESSAGES.id],
      ['employee_id=-1', 'employee_id', MESSAGES.id],
      ['employee_id=abc', 'employee_id', MESSAGES.id],
      ['employee_id=1.5', 'employee_id', MESSAGES.id],
      ['employee_id=1,,2', 'employee_id', MESSAGES.id],
      [`employee_id=${encodeURIComponent(' 3 , 2 ')}`, 'employee_id', MESSAGES.id],
      ['employee_id=1,%2B2', 'employee_id', MESSAGES.id],
      ['leave_type_id=1e0', 'leave_type_id', MESSAGES.id],
      ['employee_id=', 'employee_id', MESSAGES.id],
      [`employee_id=${HUNDRED_AND_ONE}`, 'employee_id', MESSAGES.id],
      ['employee_id=9007199254740992', 'employee_id', MESSAGES.idPastSafe],
      ['employee_id=3,09007199254740993', 'employee_id', MESSAGES.idPastSafe],
      ['leave_type_id=9999999999999999', 'leave_type_id', MESSAGES.idPastSafe],
      ['leave_type_id=0', 'leave_type_id', MESSAGES.id],
      ['leave_type_id=-1', 'leave_type_id', MESSAGES.id],
      ['leave_type_id=abc', 'leave_type_id', MESSAGES.id],
      ['leave_type_id=1,0', 'leave_type_id', MESSAGES.id],
      [`leave_type_id=${HUNDRED_AND_ONE}`, 'leave_type_id', MESSAGES.id],
      ['from=2026-02-30', 'from', MESSAGES.date],
      ['from=2026-13-01', 'from', MESSAGES.date],
      ['from=20260301', 'from', MESSAGES.date],
      ['from=2025-02-29', 'from', MESSAGES.date],
      ['from=2026-3-1', 'from', MESSAGES.date],
      ['from=2026-03-01T00:00:00Z', 'from', MESSAGES.date],
      ['to=2026-02-30', 'to', MESSAGES.date],
      ['to=2026-13-01', 'to', MESSAGES.date],
      ['to=20260301', 'to', MESSAGES.date],
      ['to=', 'to', MESSAGES.date],
      ['sort=name', 'sort', MESSAGES.sort],
      ['sort=--id', 'sort', MESSAGES.sort],
      ['sort=%2Bid', 'sort', MESSAGES.sort],
      ['sort=-', 'sort', MESSAGES.sort],
      ['sort=start_date,id', 'sort', MESSAGES.sort],
      ['sort=amount', 'sort', MESSAGES.sort],
      ['page=0', 'page', MESSAGES.page],
      ['page=-1', 'page', MESSAGES.page],
      ['page=abc', 'page', MESSAGES.page],
      ['page=1.5', 'page', MESSAGES.page],
      ['per_page=0', 'per_page', MESSAGES.per_page],
      ['per_page=101', 'per_page', MESSAGES.per_page],
      ['per_page=ten', 'per_page', MESSAGES.per_page],
      ...NOT_PLAIN_NUMBERS.flatMap(
        (value): Array<[string, string, string]> => [
          [`page=${value}`, 'page', MESSAGES.page],
          [`per_page=${value}`, 'per_page', MESSAGES.per_page],
        ],
      ),
      [`search=${'a'.repeat(101)}`, 'search', MESSAGES.search],
      [`search=${encodeURIComponent('ş'.repeat(101))}`, 'search', MESSAGES.search],
      ['updated_since=2026-03-01', 'updated_since', MESSAGES.updated_since],
      ['updated_since=2026-03-01T09:00:00', 'updated_since', MESSAGES.updated_since],
      ['updated_since=2026-02-30T09:00:00Z', 'updated_since', MESSAGES.updated_since],
      ['updated_since=yesterday', 'updated_since', MESSAGES.updated_since],
      ['updated_since=', 'updated_since', MESSAGES.updated_since],
      // Second 60 where no leap second can be (only 23:59:60 in UTC).
      [
        'updated_since=2026-06-01T09:00:60Z',
        'updated_since',
        `${MESSAGES.updated_since} (second 60 is a leap second, which only 23:59:60 in UTC can be)`,
      ],
      [
        'updated_since=2026-06-30T23:59:60%2B03:00',
        'updated_since',
        `${MESSAGES.updated_since} (second 60 is a leap second, which only 23:59:60 in UTC can be)`,
      ],
      // Offsets without their colon, which the schema's date-time format lets through.
      ['updated_since=2026-01-01T00:00:00%2B0530', 'updated_since', MESSAGES.updated_since],
      ['updated_since=2026-01-01T00:00:00%2B05', 'updated_since', MESSAGES.updated_since],
      ['updated_since=2026-01-01T00:00:00-0500', 'updated_since', MESSAGES.updated_since],
      // RFC 3339, but outside the years 0001–9999 once in UTC: never silently unfiltered.
      ['updated_since=0000-12-31T23:59:59Z', 'updated_since', MESSAGES.updated_since_range],
      ['updated_since=0001-01-01T00:00:00%2B00:01', 'updated_since', MESSAGES.updated_since_range],
      ['updated_since=9999-12-31T23:59:59-00:01', 'updated_since', MESSAGES.updated_since_range],
      ['updated_since=9999-12-31T23:59:60Z', 'updated_since', MESSAGES.updated_since_range],
    ];

    it('answers 422 problem+json naming the one bad parameter', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      for (const [query, parameter, message] of cases) {
        const res = await api.get(`/leaves?${query}`, key);
        assert.equal(res.status, 422, `${query}: ${res.body}`);
        assert.equal(res.headers['content-type'], PROBLEM_TYPE, query);
        assert.deepEqual(res.json, validationFailed([parameter, message]), query);
      }
    });

    it('accepts the boundary values next to the refused ones', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      for (const query of [
        `search=${'a'.repeat(100)}`,
        `search=${encodeURIComponent('ş'.repeat(100))}`,
        'per_page=100',
        'per_page=1',
        'page=1',
        'from=2024-02-29',
        'from=2026-03-04&to=2026-03-04',
        'status=approved',
        'updated_since=0001-01-01T00:00:00Z',
        'updated_since=0001-01-01T00:01:00%2B00:01',
        'updated_since=9999-12-31T23:59:59Z',
      ]) {
        const res = await api.get(`/leaves?${query}`, key);
        assert.equal(res.status, 200, `${query}: ${res.body}`);
      }
    });

    it('refuses from after to, naming both parameters', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves?from=2026-03-05&to=2026-03-04', key);
      assert.equal(res.status, 422, res.body);
      assert.equal(res.headers['content-type'], PROBLEM_TYPE);
      assert.deepEqual(
        res.json,
        validationFailed(['from', 'must not be after to'], ['to', 'must not be before from']),
      );
    });

    it('refuses a search whose percent-encoded bytes are not UTF-8', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves?search=Y%C4&status=pending', key);
      assert.equal(res.status, 422, res.body);
      assert.deepEqual(
        res.json,
        validationFailed(['search', 'must be UTF-8 text: its percent-encoded bytes are not UTF-8']),
      );
    });

    it('names every bad parameter of one request', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const query = [
        'status=bogus',
        'employee_id=0',
        'leave_type_id=abc',
        'from=2026-02-30',
        'to=20260301',
        'sort=name',
        'page=0',
        'per_page=101',
        `search=${'x'.repeat(101)}`,
        'updated_since=yesterday',
      ].join('&');
      const res = await api.get(`/leaves?${query}`, key);
      assert.equal(res.status, 422, res.body);
      assert.equal(res.headers['content-type'], PROBLEM_TYPE);
      const expected = new Map([
        ['status', MESSAGES.status],
        ['employee_id', MESSAGES.id],
        ['leave_type_id', MESSAGES.id],
        ['from', MESSAGES.date],
        ['to', MESSAGES.date],
        ['sort', MESSAGES.sort],
        ['page', MESSAGES.page],
        ['per_page', MESSAGES.per_page],
        ['search', MESSAGES.search],
        ['updated_since', MESSAGES.updated_since],
      ]);
      // The order of the entries is not part of the contract; the detail follows it.
      const errors: { parameter: string; message: string }[] = res.json.errors;
      assert.deepEqual(new Map(errors.map((e) => [e.parameter, e.message])), expected);
      assert.equal(errors.length, expected.size);
      assert.deepEqual(res.json, validationFailed(...errors));
    });

    it('says a repeated parameter is repeated, not that its value is malformed', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get(
        '/leaves?status=approved&status=pending&page=1&page=1&page=1&per_page=5&employee_id=1',
        key,
      );
      assert.deepEqual(
        res.json,
        validationFailed(
          ['status', 'must be given once, not 2 times'],
          ['page', 'must be given once, not 3 times'],
        ),
      );
    });

    it('names an inverted date range together with other bad parameters', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      const res = await api.get('/leaves?status=bogus&from=2026-03-05&to=2026-03-04', key);
      assert.equal(res.status, 422, res.body);
      const errors: { parameter: string; message: string }[] = res.json.errors;
      assert.deepEqual(errors.map((e) => e.parameter).sort(), ['from', 'status', 'to']);
      assert.deepEqual(res.json, validationFailed(...errors));
    });

    it('names an inverted range and an updated_since out of range together', async (t) => {
      const api = await useApi(t, dialect, { records: acme(leave(1, 1, 1, 1)) });
      const key = await api.createKey(1);
      for (const extra of ['', '&page=0']) {
        const res = await api.get(
          `/leaves?from=2026-03-05&to=2026-03-04&updated_since=0000-01-01T00:00:00Z${extra}`,
          key,
        );
        assert.equal(res.status, 422, res.body);
        const errors: { parameter: string; message: string }[] = res.json.errors;
        const expected = ['from', 'to', 'updated_since', ...(extra ? ['page'] : [])];
        assert.deepEqual(errors.map((e) => e.parameter).sort(), expected.sort(), extra);
        assert.deepEqual(res.json, validationFailed(...errors));
      }
    });
  });
});

describeEachDialect('GET /leaves/{id}', (dialect) => {
  it('returns every list field plus the document obligation', async (t) => {
    const api = await useApi(t, dialect, {
      records: [
        company(1),
        employee(1, 1),
        employee(1, 2, { first_name: 'Hans', last_name: 'Müller', department: 'People' }),
        leaveType(1, 1, { name: 'Sick leave', type_key: 'sick', requires_document: true }),
        leave(1, 7, 1, 1, {
          status: 'approved',
          start_date: '2026-03-09',
          end_date: '2026-03-09',
          days: 0.25,
          duration_type: 'hourly',
          start_time: '13:00',
          end_time: '15:00',
          hours: 2,
          reason: 'Doctor',
          substitute_employee_id: 2,
          approved_at: '2026-03-08T10:00:00+01:00',
          created_at: '2026-03-08T08:00:00Z',
          updated_at: '2026-03-08T09:00:00.000Z',
          document: {
            deadline: '2026-03-16',
            obligation_status: 'pending',
            attachments: [{ file_name: 'CANARY-report.pdf' }, { file_name: 'CANARY-scan.jpg' }],
          },
        }),
      ],
    });
    const key = await api.createKey(1);
    const res = await api.get('/leaves/7', key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const listed = await api.get('/leaves', key);
    const expectedItem = {
      id: 7,
      status: 'approved',
      employee: summary(1, 'Ayşe Yılmaz'),
      leave_type: { id: 1, name: 'Sick leave', type_key: 'sick' },
      start_date: '2026-03-09',
      end_date: '2026-03-09',
      days: 0.25,
      duration_type: 'hourly',
      start_time: '13:00',
      end_time: '15:00',
      hours: 2,
      reason: 'Doctor',
      rejection_reason: null,
      substitute_employee: summary(2, 'Hans Müller', 'E-2', 'People'),
      approved_at: '2026-03-08T09:00:00Z',
      created_at: '2026-03-08T08:00:00Z',
      updated_at: '2026-03-08T09:00:00Z',
    };
    assert.deepEqual(listed.json.data, [expectedItem]);
    assert.deepEqual(res.json, {
      data: {
        ...expectedItem,
        document: { deadline: '2026-03-16', obligation_status: 'pending', has_attachments: true },
      },
    });
    assert.doesNotMatch(res.body, /report\.pdf|scan\.jpg|file_name|"attachments"/);
  });

  it('reports has_attachments false for a leave without attachments', async (t) => {
    const api = await useApi(t, dialect, {
      records: acme(
        leave(1, 1, 1, 1, { document: null }),
        leave(1, 2, 1, 1, {
          document: { deadline: '2026-03-10', obligation_status: 'waived', attachments: [] },
        }),
        leave(1, 3, 1, 1, {
          document: {
            deadline: null,
            obligation_status: null,
            attachments: [{ file_name: 'a.pdf' }],
          },
        }),
      ),
    });
    const key = await api.createKey(1);
    const documents = [];
    for (const id of [1, 2, 3]) {
      const res = await api.get(`/leaves/${id}`, key);
      assert.equal(res.status, 200, res.body);
      documents.push(res.json.data.document);
    }
    assert.deepEqual(documents, [
      { deadline: null, obligation_status: null, has_attachments: false },
      { deadline: '2026-03-10', obligation_status: 'waived', has_attachments: false },
      { deadline: null, obligation_status: null, has_attachments: true },
    ]);
  });

  it('answers 404 for a missing id, with the same bytes as for another company’s leave', async (t) => {
    const api = await useApi(t, dialect, {
      records: [...smallCompany(1, 0), ...smallCompany(2, 100)],
    });
    const key = await api.createKey(1);
    const missing = await api.get('/leaves/999', key);
    assert.equal(missing.status, 404, missing.body);
    assert.equal(missing.headers['content-type'], PROBLEM_TYPE);
    assert.deepEqual(missing.json, NOT_FOUND);
    const foreign = await api.get('/leaves/101', key);
    assert.equal(foreign.status, 404, foreign.body);
    assert.equal(foreign.headers['content-type'], PROBLEM_TYPE);
    assert.equal(foreign.body, missing.body);
    // The other company's key sees its own leave.
    const otherKey = await api.createKey(2);
    assert.equal((await api.get('/leaves/101', otherKey)).status, 200);
  });

  it('answers 404 for a path id that is not a positive integer, or too large to exist', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    for (const id of ['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', '9999999999999999']) {
      const res = await api.get(`/leaves/${id}`, key);
      assert.equal(res.status, 404, `/leaves/${id}: ${res.body}`);
      assert.equal(res.headers['content-type'], PROBLEM_TYPE, `/leaves/${id}`);
      assert.deepEqual(res.json, NOT_FOUND, `/leaves/${id}`);
    }
  });
});

describeEachDialect('GET /leave-types', (dialect) => {
  it('lists only the company’s active leave types, by id', async (t) => {
    const api = await useApi(t, dialect, {
      records: [
        company(1),
        leaveType(1, 3, {
          name: 'Sick leave',
          type_key: 'sick',
          description: 'With a doctor’s report',
          max_days_per_year: 10,
          quota_type: 'none',
          requires_document: true,
          affects_annual_balance: false,
        }),
        leaveType(1, 1),
        leaveType(1, 2, { name: 'Old unpaid', type_key: 'unpaid', active: false }),
        company(2),
        leaveType(2, 4, { name: 'Other company' }),
      ],
    });
    const key = await api.createKey(1);
    const res = await api.get('/leave-types', key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.deepEqual(res.json, {
      data: [
        {
          id: 1,
          name: 'Annual leave',
          type_key: 'annual',
          description: null,
          max_days_per_year: 14,
          quota_type: 'yearly',
          requires_document: false,
          affects_annual_balance: true,
        },
        {
          id: 3,
          name: 'Sick leave',
          type_key: 'sick',
          description: 'With a doctor’s report',
          max_days_per_year: 10,
          quota_type: 'none',
          requires_document: true,
          affects_annual_balance: false,
        },
      ],
    });
  });

  it('answers an empty list when the company has no active leave type', async (t) => {
    const api = await useApi(t, dialect, {
      records: [company(1), leaveType(1, 1, { active: false })],
    });
    const key = await api.createKey(1);
    const res = await api.get('/leave-types', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json, { data: [] });
  });
});

describeEachDialect('leaves.read scope', (dialect) => {
  it('refuses a key without leaves.read on every leave operation', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1, { scopes: ['expenses.read'] });
    // Scope comes before parameter validation and record lookup (docs/api.md "Authentication, in
    // this order").
    for (const path of ['/leaves', '/leaves/1', '/leave-types', '/leaves?page=0', '/leaves/999']) {
      const res = await api.get(path, key);
      assert.equal(res.status, 403, `${path}: ${res.body}`);
      assert.equal(res.headers['content-type'], PROBLEM_TYPE, path);
      assert.equal(
        res.headers['www-authenticate'],
        'Bearer error="insufficient_scope", scope="leaves.read"',
        path,
      );
      assert.deepEqual(res.json, insufficientScope('leaves.read'), path);
    }
  });

  it('serves a key with only leaves.read', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1, { scopes: ['leaves.read'] });
    for (const path of ['/leaves', '/leaves/1', '/leave-types']) {
      const res = await api.get(path, key);
      assert.equal(res.status, 200, `${path}: ${res.body}`);
    }
  });
});
