import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Dialect } from '../../src/db/connect.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { meta, NOT_FOUND, validationFailed } from '../helpers/problems.ts';
import { NOT_PLAIN_NUMBERS } from '../helpers/query-values.ts';
import { company, employee, SERVED_EMPLOYEE_KEYS } from '../helpers/records.ts';

type Fields = Record<string, unknown>;

/** An employee of company 1 with the given names (the factory fills the rest). */
const person = (id: number, firstName: string, lastName: string, fields: Fields = {}) =>
  employee(1, id, { first_name: firstName, last_name: lastName, ...fields });

/** The list item the API must answer for a factory record: these fields and no others. */
const asListed = (record: ReturnType<typeof employee>) => ({
  id: record.id,
  employee_number: record.employee_number,
  full_name: `${record.first_name} ${record.last_name}`,
  email: record.email,
  department: record.department,
  position: record.position,
  status: record.status,
  hire_date: record.hire_date,
  updated_at: record.updated_at,
});

const STATUS_MESSAGE = 'must be a comma-separated list of: active, inactive, terminated';
const PAGE_MESSAGE = 'must be an integer from 1 to 9007199254740991 in plain decimal digits';
const PER_PAGE_MESSAGE = 'must be an integer from 1 to 100 in plain decimal digits';
const SORT_MESSAGE =
  'must be one of id, full_name, employee_number, hire_date, updated_at, each optionally prefixed with -';
const SEARCH_MESSAGE = 'must be at most 100 characters';

/** An app over the records, with a key of company 1. */
async function setUp(t: TestContext, dialect: Dialect, records: unknown[]) {
  const api = await useApi(t, dialect, { records });
  const key = await api.createKey(1);
  return { api, key };
}

const ids = (body: { data: Array<{ id: number }> }) => body.data.map((e) => e.id);

describeEachDialect('GET /employees', (dialect) => {
  describe('shape', () => {
    it('lists the company’s employees with exactly the roster fields', async (t) => {
      const { api, key } = await setUp(t, dialect, [
        company(1),
        company(2),
        person(1, 'Ayşe', 'Yılmaz', {
          employee_number: 'E-0001',
          email: 'ayse@acme.test',
          department: 'Finance',
          position: 'Accountant',
          status: 'active',
          hire_date: '2020-01-15',
          updated_at: '2026-02-01T08:00:00Z',
        }),
        employee(2, 2, { first_name: 'Other', last_name: 'Company' }),
        person(3, 'Hans', 'Müller', {
          employee_number: 'E-0003',
          email: 'hans@acme.test',
          department: 'Engineering',
          position: 'Developer',
          status: 'terminated',
          hire_date: '2018-11-30',
          updated_at: '2026-02-01T08:00:00Z',
        }),
      ]);
      const res = await api.get('/employees', key);
      assert.equal(res.status, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json, {
        data: [
          {
            id: 1,
            employee_number: 'E-0001',
            full_name: 'Ayşe Yılmaz',
            email: 'ayse@acme.test',
            department: 'Finance',
            position: 'Accountant',
            status: 'active',
            hire_date: '2020-01-15',
            updated_at: '2026-02-01T08:00:00Z',
          },
          {
            id: 3,
            employee_number: 'E-0003',
            full_name: 'Hans Müller',
            email: 'hans@acme.test',
            department: 'Engineering',
            position: 'Developer',
            status: 'terminated',
            hire_date: '2018-11-30',
            updated_at: '2026-02-01T08:00:00Z',
          },
        ],
        meta: meta({ total: 2, from: 1, to: 2 }),
      });
    });

    it('never carries sensitive or internal fields', async (t) => {
      const { api, key } = await setUp(t, dialect, [company(1), person(1, 'Ayşe', 'Yılmaz')]);
      const list = await api.get('/employees', key);
      const one = await api.get('/employees/1', key);
      assert.deepEqual(Object.keys(list.json.data[0]).sort(), SERVED_EMPLOYEE_KEYS);
      assert.deepEqual(Object.keys(one.json.data).sort(), SERVED_EMPLOYEE_KEYS);
      assert.deepEqual(Object.keys(list.json).sort(), ['data', 'meta']);
      assert.deepEqual(Object.keys(one.json), ['data']);
      for (const body of [list.body, one.body]) {
        for (const field of ['national_id', 'salary', 'iban', 'address', 'company_id', 'folded']) {
          assert.equal(body.includes(field), false, `${field} in ${body}`);
        }
      }
    });

    it('works with either scope alone', async (t) => {
      const api = await useApi(t, dialect, { records: [company(1), person(1, 'Ayşe', 'Yılmaz')] });
      for (const scopes of [['leaves.read'], ['expenses.read']]) {
        const key = await api.createKey(1, { scopes });
        const list = await api.get('/employees', key);
        assert.equal(list.status, 200, `${scopes}: ${list.body}`);
        assert.deepEqual(ids(list.json), [1]);
        const one = await api.get('/employees/1', key);
        assert.equal(one.status, 200, `${scopes}: ${one.body}`);
      }
    });
  });

  describe('status filter', () => {
    const records = [
      company(1),
      person(1, 'Ayşe', 'Yılmaz', { status: 'active' }),
      person(2, 'Hans', 'Müller', { status: 'inactive' }),
      person(3, 'Sébastien', 'Roux', { status: 'terminated' }),
      person(4, 'Zeynep', 'Kaya', { status: 'active' }),
    ];
    const cases: Array<[query: string, expected: number[]]> = [
      ['active', [1, 4]],
      ['inactive', [2]],
      ['terminated', [3]],
      ['active,terminated', [1, 3, 4]],
      [' inactive , terminated ', [2, 3]],
      ['active,active', [1, 4]],
      ['active,inactive,terminated', [1, 2, 3, 4]],
    ];
    it('filters by one status or a comma-separated list', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      for (const [status, expected] of cases) {
        await t.test(`status=${JSON.stringify(status)}`, async () => {
          const res = await api.get(`/employees?status=${encodeURIComponent(status)}`, key);
          assert.equal(res.status, 200, res.body);
          assert.deepEqual(ids(res.json), expected);
          assert.deepEqual(
            res.json.data,
            records
              .slice(1)
              .filter((r) => expected.includes(r.id as number))
              .map((r) => asListed(r as ReturnType<typeof employee>)),
          );
          assert.equal(res.json.meta.total, expected.length);
        });
      }
    });
  });

  describe('search', () => {
    const records = [
      company(1),
      company(2),
      person(10, 'Ayşe', 'Yılmaz', { employee_number: 'E-0010' }),
      person(11, 'Hans', 'Müller', { employee_number: 'HR-77' }),
      person(12, 'Sébastien', 'Roux', { employee_number: 'FR-12' }),
      person(13, 'Zeynep', 'Kaya', { employee_number: 'AB%12', status: 'inactive' }),
      person(14, 'Ali', 'Kaya', { employee_number: 'AB_12' }),
      person(15, 'Veli', 'Kaya', { employee_number: 'ABX12' }),
      person(16, 'Οδυσσεύς', 'Παπαδόπουλος', { employee_number: 'GR-ΣΤ' }),
      // Another company's namesake must never be found.
      employee(2, 20, { first_name: 'Ayşe', last_name: 'Yılmaz', employee_number: 'E-0010' }),
    ];
    const cases: Array<[search: string, expected: number[]]> = [
      ['ayse', [10]],
      ['Ayşe', [10]],
      ['yilmaz', [10]],
      ['YILMAZ', [10]],
      ['Yılmaz', [10]],
      ['ayse yilmaz', [10]],
      ['AYŞE YILMAZ', [10]],
      ['muller', [11]],
      ['MÜLLER', [11]],
      ['sebastien', [12]],
      ['SÉBASTIEN', [12]],
      ['e-001', [10]],
      ['hr-7', [11]],
      ['Fr-1', [12]],
      ['12', [12, 13, 14, 15]],
      ['b%1', [13]],
      ['%', [13]],
      ['b_1', [14]],
      ['_', [14]],
      ['kaya', [13, 14, 15]],
      ['eli kay', [15]],
      ['nobody', []],
      // A capital Σ lower-cases to ς at the end of a word and to σ elsewhere: both find σ and ς.
      ['ΟΔΥΣ', [16]],
      ['οδυσ', [16]],
      ['ΟΔΥΣΣΕΥΣ', [16]],
      ['οδυσσευσ', [16]],
      ['Οδυσσεύς Π', [16]],
      ['gr-σ', [16]],
      ['GR-ς', [16]],
      ['', [10, 11, 12, 13, 14, 15, 16]],
    ];
    it('matches names and numbers case- and accent-insensitively, % and _ literally', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      for (const [search, expected] of cases) {
        await t.test(
          `search=${JSON.stringify(search)} finds ${JSON.stringify(expected)}`,
          async () => {
            const res = await api.get(`/employees?search=${encodeURIComponent(search)}`, key);
            assert.equal(res.status, 200, res.body);
            assert.deepEqual(ids(res.json), expected);
            assert.equal(res.json.meta.total, expected.length);
          },
        );
      }
    });

    it('returns the found employee’s exact item', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      const res = await api.get('/employees?search=muller', key);
      assert.deepEqual(res.json, {
        data: [asListed(records[3] as ReturnType<typeof employee>)],
        meta: meta({ total: 1, from: 1, to: 1 }),
      });
    });

    it('combines search with a status filter', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      const res = await api.get('/employees?search=kaya&status=active', key);
      assert.deepEqual(ids(res.json), [14, 15]);
    });

    it('accepts a search of exactly 100 characters', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      const res = await api.get(`/employees?search=${encodeURIComponent('ş'.repeat(100))}`, key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.data, []);
    });

    it('refuses a search whose percent-encoded bytes are not UTF-8', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      // `Müller` in Latin-1: otherwise a search for the text `m%fcller`.
      const res = await api.get('/employees?search=M%FCller', key);
      assert.equal(res.status, 422, res.body);
      assert.deepEqual(
        res.json,
        validationFailed(['search', 'must be UTF-8 text: its percent-encoded bytes are not UTF-8']),
      );
    });
  });

  describe('sort', () => {
    // Folded names: zeynep kaya, cagri demir, emile zola, ab c, a bz, cagri demir.
    // Raw code points would put "Zeynep" before "Çağrı" and "Émile", and "Ab C" before
    // "A Bz" under a locale collation that ignores spaces: folding decides both.
    const records = [
      company(1),
      person(1, 'Zeynep', 'Kaya', { employee_number: 'b-2', hire_date: '2021-01-01' }),
      person(2, 'Çağrı', 'Demir', { employee_number: 'A-10', hire_date: '2020-06-01' }),
      person(3, 'Émile', 'Zola', { employee_number: 'a-9', hire_date: '2021-01-01' }),
      person(4, 'Ab', 'C', { employee_number: 'B-1', hire_date: '2019-01-01' }),
      person(5, 'A', 'Bz', { employee_number: 'a-10', hire_date: '2020-06-01' }),
      person(6, 'Çağrı', 'Demir', { employee_number: 'c-1', hire_date: '2022-01-01' }),
    ];
    const cases: Array<[sort: string | null, expected: number[]]> = [
      [null, [1, 2, 3, 4, 5, 6]],
      ['id', [1, 2, 3, 4, 5, 6]],
      ['-id', [6, 5, 4, 3, 2, 1]],
      ['full_name', [5, 4, 2, 6, 3, 1]],
      ['-full_name', [1, 3, 6, 2, 4, 5]],
      ['employee_number', [2, 5, 3, 4, 1, 6]],
      ['-employee_number', [6, 1, 4, 3, 5, 2]],
      ['hire_date', [4, 2, 5, 1, 3, 6]],
      ['-hire_date', [6, 3, 1, 5, 2, 4]],
    ];
    it('orders by the sort field, text by its folded form, id breaking ties in the same direction', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      for (const [sort, expected] of cases) {
        await t.test(`sort=${sort ?? '(default)'}`, async () => {
          const res = await api.get(sort ? `/employees?sort=${sort}` : '/employees', key);
          assert.equal(res.status, 200, res.body);
          assert.deepEqual(ids(res.json), expected);
        });
      }
    });

    it('orders digits, punctuation and spaces by code point, whatever the database’s locale', async (t) => {
      // A locale collation (glibc en_US, ICU) would put "_-1" before "1-2".
      const numbers = ['a.1', '_-1', 'Z-0', 'a 3', '1-2', 'a-2'];
      const { api, key } = await setUp(t, dialect, [
        company(1),
        ...numbers.map((number, i) => employee(1, i + 1, { employee_number: number })),
      ]);
      const res = await api.get('/employees?sort=employee_number', key);
      assert.deepEqual(
        res.json.data.map((e: { employee_number: string }) => e.employee_number),
        ['1-2', '_-1', 'a 3', 'a-2', 'a.1', 'Z-0'],
      );
    });

    it('pages through a sorted list without gaps or repeats', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      const pages = [];
      for (const page of [1, 2, 3]) {
        const res = await api.get(`/employees?sort=-full_name&per_page=2&page=${page}`, key);
        pages.push(ids(res.json));
      }
      assert.deepEqual(pages, [
        [1, 3],
        [6, 2],
        [4, 5],
      ]);
    });

    it('sorts within a filter', async (t) => {
      const { api, key } = await setUp(t, dialect, records);
      const res = await api.get('/employees?search=cagri&sort=-hire_date', key);
      assert.deepEqual(ids(res.json), [6, 2]);
    });
  });

  describe('pagination', () => {
    const thirty = [company(1), ...Array.from({ length: 30 }, (_, i) => employee(1, i + 1))];

    it('answers 25 per page by default', async (t) => {
      const { api, key } = await setUp(t, dialect, thirty);
      const res = await api.get('/employees', key);
      assert.deepEqual(
        ids(res.json),
        Array.from({ length: 25 }, (_, i) => i + 1),
      );
      assert.deepEqual(res.json.meta, meta({ total: 30, last_page: 2, from: 1, to: 25 }));
    });

    it('answers the partial last page', async (t) => {
      const { api, key } = await setUp(t, dialect, thirty);
      const res = await api.get('/employees?page=2', key);
      assert.deepEqual(ids(res.json), [26, 27, 28, 29, 30]);
      assert.deepEqual(
        res.json.meta,
        meta({ current_page: 2, total: 30, last_page: 2, from: 26, to: 30 }),
      );
    });

    it('answers one per page', async (t) => {
      const { api, key } = await setUp(t, dialect, thirty);
      const res = await api.get('/employees?per_page=1&page=30', key);
      assert.deepEqual(ids(res.json), [30]);
      assert.deepEqual(
        res.json.meta,
        meta({ current_page: 30, per_page: 1, total: 30, last_page: 30, from: 30, to: 30 }),
      );
    });

    it('answers up to 100 per page', async (t) => {
      const many = [company(1), ...Array.from({ length: 120 }, (_, i) => employee(1, i + 1))];
      const { api, key } = await setUp(t, dialect, many);
      const first = await api.get('/employees?per_page=100', key);
      assert.equal(first.json.data.length, 100);
      assert.deepEqual(
        first.json.meta,
        meta({ per_page: 100, total: 120, last_page: 2, from: 1, to: 100 }),
      );
      const second = await api.get('/employees?per_page=100&page=2', key);
      assert.deepEqual(
        ids(second.json),
        Array.from({ length: 20 }, (_, i) => i + 101),
      );
    });

    it('answers an empty page past the last', async (t) => {
      const { api, key } = await setUp(t, dialect, thirty);
      const res = await api.get('/employees?page=3', key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        data: [],
        meta: meta({ current_page: 3, total: 30, last_page: 2 }),
      });
      // 2^31 and 2^53 − 1 too, for the whole list and an employee's own few (read with their
      // count), in every order.
      for (const query of ['', '&status=active', '&search=a', '&sort=-full_name']) {
        for (const page of [1000000000, 2147483648, 9007199254740991]) {
          const far = await api.get(`/employees?page=${page}&per_page=100${query}`, key);
          assert.equal(far.status, 200, far.body);
          assert.deepEqual(far.json.data, []);
          assert.equal(far.json.meta.current_page, page);
        }
      }
    });

    it('pages a roster deeper than its anchors in every order, as a model sorts it', async (t) => {
      // More employees than two anchor intervals (1,000), with ties in every sort column, so a
      // deep page is walked from an anchor, and a page of the second half from the end.
      const STATUSES = ['active', 'inactive', 'terminated'];
      const roster = Array.from({ length: 2_345 }, (_, i) => {
        const id = i + 1;
        return employee(1, id, {
          first_name: `name${(id * 7919) % 97}`,
          last_name: 'x',
          employee_number: `E-${(id * 104729) % 211}`,
          status: STATUSES[(id * 31) % 7 < 4 ? 0 : id % 3],
          hire_date: `20${10 + (id % 13)}-0${1 + (id % 9)}-1${id % 10}`,
          updated_at: `2026-0${1 + (id % 5)}-01T08:00:00Z`,
        });
      });
      const { api, key } = await setUp(t, dialect, [company(1), ...roster]);
      const keyOf: Record<string, (e: (typeof roster)[number]) => string | number> = {
        id: (e) => e.id,
        full_name: (e) => `${e.first_name} ${e.last_name}`,
        employee_number: (e) => e.employee_number,
        hire_date: (e) => e.hire_date,
        updated_at: (e) => e.updated_at,
      };
      for (const [field, keyFn] of Object.entries(keyOf)) {
        for (const direction of [1, -1]) {
          for (const status of [undefined, ['active', 'terminated'], ['inactive']]) {
            const expected = roster
              .filter((e) => !status || status.includes(e.status))
              .sort((a, b) => {
                const [x, y] = [keyFn(a), keyFn(b)];
                return direction * (x < y ? -1 : x > y ? 1 : a.id - b.id);
              })
              .map((e) => e.id);
            const lastPage = Math.ceil(expected.length / 100);
            for (const page of [1, 11, 12, Math.ceil(lastPage / 2) + 1, lastPage - 1, lastPage]) {
              const query = new URLSearchParams({
                sort: `${direction < 0 ? '-' : ''}${field}`,
                per_page: '100',
                page: String(page),
              });
              if (status) query.set('status', status.join(','));
              const res = await api.get(`/employees?${query}`, key);
              assert.equal(res.status, 200, res.body);
              assert.deepEqual(
                ids(res.json),
                expected.slice((page - 1) * 100, page * 100),
                `${query}`,
              );
              assert.equal(res.json.meta.total, expected.length, `${query}`);
            }
          }
        }
      }
    });

    it('answers last_page 1 and null from/to for an empty list', async (t) => {
      const { api, key } = await setUp(t, dialect, [company(1), company(2), employee(2, 1)]);
      const res = await api.get('/employees', key);
      assert.deepEqual(res.json, { data: [], meta: meta({}) });
      const filtered = await api.get('/employees?page=2&per_page=10', key);
      assert.deepEqual(filtered.json, {
        data: [],
        meta: meta({ current_page: 2, per_page: 10 }),
      });
    });
  });

  describe('invalid parameters', () => {
    const cases: Array<[query: string, errors: Array<[string, string]>]> = [
      ['status=retired', [['status', STATUS_MESSAGE]]],
      ['status=active,retired', [['status', STATUS_MESSAGE]]],
      ['status=ACTIVE', [['status', STATUS_MESSAGE]]],
      ['status=active,', [['status', STATUS_MESSAGE]]],
      ['status=active,,inactive', [['status', STATUS_MESSAGE]]],
      ['status=', [['status', STATUS_MESSAGE]]],
      ['page=0', [['page', PAGE_MESSAGE]]],
      ['page=-1', [['page', PAGE_MESSAGE]]],
      ['page=abc', [['page', PAGE_MESSAGE]]],
      ['page=1.5', [['page', PAGE_MESSAGE]]],
      ['page=9007199254740992', [['page', PAGE_MESSAGE]]],
      // Digits past a float's range, which the query parser reads as Infinity.
      [`page=1${'0'.repeat(309)}`, [['page', PAGE_MESSAGE]]],
      [`per_page=0${'9'.repeat(400)}`, [['per_page', PER_PAGE_MESSAGE]]],
      ['page=', [['page', PAGE_MESSAGE]]],
      ['per_page=0', [['per_page', PER_PAGE_MESSAGE]]],
      ['per_page=101', [['per_page', PER_PAGE_MESSAGE]]],
      ['per_page=ten', [['per_page', PER_PAGE_MESSAGE]]],
      ...NOT_PLAIN_NUMBERS.flatMap(
        (value): Array<[string, Array<[string, string]>]> => [
          [`page=${value}`, [['page', PAGE_MESSAGE]]],
          [`per_page=${value}`, [['per_page', PER_PAGE_MESSAGE]]],
        ],
      ),
      ['sort=name', [['sort', SORT_MESSAGE]]],
      ['sort=--id', [['sort', SORT_MESSAGE]]],
      ['sort=ID', [['sort', SORT_MESSAGE]]],
      ['sort=salary', [['sort', SORT_MESSAGE]]],
      ['sort=id,full_name', [['sort', SORT_MESSAGE]]],
      [`search=${'x'.repeat(101)}`, [['search', SEARCH_MESSAGE]]],
      [
        `status=x&search=${'x'.repeat(101)}&sort=x&page=0&per_page=101`,
        [
          ['status', STATUS_MESSAGE],
          ['search', SEARCH_MESSAGE],
          ['sort', SORT_MESSAGE],
          ['page', PAGE_MESSAGE],
          ['per_page', PER_PAGE_MESSAGE],
        ],
      ],
    ];
    it('answers 422 validation_failed naming each bad parameter', async (t) => {
      const { api, key } = await setUp(t, dialect, [company(1), employee(1, 1)]);
      for (const [query, errors] of cases) {
        await t.test(query.slice(0, 60), async () => {
          const res = await api.get(`/employees?${query}`, key);
          assert.equal(res.status, 422, res.body);
          assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
          assert.deepEqual(res.json, validationFailed(...errors));
        });
      }
    });

    it('ignores unknown parameters', async (t) => {
      const { api, key } = await setUp(t, dialect, [company(1), employee(1, 1)]);
      // from and to are leaves' and expenses' parameters, not employees'.
      const unknown = 'colour=blue&national_id=1&from=2026-03-05&to=2026-03-04';
      const res = await api.get(`/employees?${unknown}`, key);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(ids(res.json), [1]);
      const bad = await api.get(`/employees?page=0&${unknown}`, key);
      assert.equal(bad.status, 422, bad.body);
      assert.deepEqual(
        bad.json.errors.map((e: { parameter: string }) => e.parameter),
        ['page'],
      );
    });
  });
});

describeEachDialect('GET /employees/{id}', (dialect) => {
  const records = [
    company(1),
    company(2),
    person(1, 'Ayşe', 'Yılmaz', {
      employee_number: 'E-0001',
      email: 'ayse@acme.test',
      department: 'Finance',
      position: 'Accountant',
      status: 'inactive',
      hire_date: '2020-01-15',
      updated_at: '2026-02-01T08:00:00Z',
    }),
    employee(2, 2, { first_name: 'Other', last_name: 'Company' }),
  ];

  it('answers the employee with exactly the roster fields', async (t) => {
    const { api, key } = await setUp(t, dialect, records);
    const res = await api.get('/employees/1', key);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(res.json, {
      data: {
        id: 1,
        employee_number: 'E-0001',
        full_name: 'Ayşe Yılmaz',
        email: 'ayse@acme.test',
        department: 'Finance',
        position: 'Accountant',
        status: 'inactive',
        hire_date: '2020-01-15',
        updated_at: '2026-02-01T08:00:00Z',
      },
    });
  });

  it('answers 404 for another company’s employee, byte for byte as for a missing one', async (t) => {
    const { api, key } = await setUp(t, dialect, records);
    const missing = await api.get('/employees/999', key);
    const foreign = await api.get('/employees/2', key);
    assert.equal(missing.status, 404);
    assert.equal(foreign.status, 404);
    assert.match(String(missing.headers['content-type']), /^application\/problem\+json/);
    assert.deepEqual(missing.json, NOT_FOUND);
    assert.equal(foreign.body, missing.body);
    assert.equal(foreign.headers['content-type'], missing.headers['content-type']);
    assert.equal(foreign.headers['content-length'], missing.headers['content-length']);
  });

  it('answers the same 404 for a path id that is not a positive integer', async (t) => {
    const { api, key } = await setUp(t, dialect, records);
    const missing = await api.get('/employees/999', key);
    const badIds = [
      'abc',
      '0',
      '-1',
      '1.5',
      '01',
      '1e3',
      '%20',
      '9007199254740993',
      '9'.repeat(30),
    ];
    for (const id of badIds) {
      await t.test(`/employees/${id}`, async () => {
        const res = await api.get(`/employees/${id}`, key);
        assert.equal(res.status, 404, res.body);
        assert.equal(res.body, missing.body);
      });
    }
  });
});

describeEachDialect('employees’ updated_at', (dialect) => {
  it('is the export’s own time, else the time of the import that changed the employee', async (t) => {
    const { api, key } = await setUp(t, dialect, [
      company(1),
      person(1, 'Ayşe', 'Yılmaz', { updated_at: '2026-01-10T09:00:00Z' }),
      person(2, 'Hans', 'Müller', { updated_at: '2026-03-01T09:00:00+03:00' }),
    ]);
    const before = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await api.load([company(1), person(3, 'Zoë', 'García', { updated_at: undefined })]);
    const third = (await api.get('/employees/3', key)).json.data.updated_at;
    assert.ok(third >= before, `${third} is the import's time`);
    // The same values again: the employee keeps its time.
    await api.load([company(1), person(3, 'Zoë', 'García', { updated_at: undefined })]);
    assert.equal((await api.get('/employees/3', key)).json.data.updated_at, third);

    const listed = async (query: string) => ids((await api.get(`/employees?${query}`, key)).json);
    assert.deepEqual(await listed('sort=updated_at'), [1, 2, 3]);
    assert.deepEqual(await listed('sort=-updated_at'), [3, 2, 1]);
    assert.deepEqual(await listed('updated_since=2026-03-01T06:00:00Z'), [2, 3]);
    assert.deepEqual(await listed('updated_since=2026-03-01T06:00:01Z&sort=-id'), [3]);
    const bad = await api.get('/employees?updated_since=2026-03-01', key);
    assert.equal(bad.status, 422);
    assert.equal(bad.json.errors[0].parameter, 'updated_since');
  });

  it('takes a new time of the export’s own as a change, with nothing else new', async (t) => {
    const { api, key } = await setUp(t, dialect, [
      company(1),
      person(1, 'Ayşe', 'Yılmaz', { updated_at: '2026-01-10T09:00:00Z' }),
      person(2, 'Hans', 'Müller', { updated_at: undefined }),
    ]);
    const cursor = (await api.get('/changes', key)).json.meta.next_cursor;
    const feed = async () => (await api.get(`/changes?after=${cursor}`, key)).json.data.length;
    await api.load([
      person(1, 'Ayşe', 'Yılmaz', { updated_at: '2026-03-01T12:00:00+03:00' }),
      person(2, 'Hans', 'Müller', { updated_at: '2025-12-24T18:00:00Z' }),
    ]);
    const served = async (id: number) =>
      (await api.get(`/employees/${id}`, key)).json.data.updated_at;
    assert.equal(await served(1), '2026-03-01T09:00:00Z');
    assert.equal(await served(2), '2025-12-24T18:00:00Z');
    assert.equal(await feed(), 2, 'both come again in the change feed');
    // The same times again change nothing.
    await api.load([
      person(1, 'Ayşe', 'Yılmaz', { updated_at: '2026-03-01T09:00:00Z' }),
      person(2, 'Hans', 'Müller', { updated_at: '2025-12-24T18:00:00Z' }),
    ]);
    assert.equal(await feed(), 2);
    // The file's last line for an employee counts: a time of its own, then one without.
    const before = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await api.load([
      person(1, 'Ayşe', 'Kaya', { updated_at: '2020-01-01T00:00:00Z' }),
      person(1, 'Ayşe', 'Kaya', { updated_at: undefined }),
    ]);
    assert.ok((await served(1)) >= before);
  });
});
