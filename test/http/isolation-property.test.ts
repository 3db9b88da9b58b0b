import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { category, company, employee, expense, leave, leaveType } from '../helpers/records.ts';

/**
 * Isolation as a property: random datasets of several companies whose records interleave by
 * id, then random requests (operation, filters, pagination, sort, search) through random
 * keys. Every answer must equal a model of the key's own company: the same ids in the same
 * order, the same total, embedded records of that company only, and for any id that is not
 * the company's a 404 identical to the one for an id nobody has.
 *
 * Seeded: FC_SEED=… reproduces a run (the default seed is fixed); ISOLATION_RUNS sets how many
 * datasets (each with up to MAX_REQUESTS_PER_RUN requests). A failure prints the shrunk
 * dataset and requests, with the seed and path to replay them.
 */

const SEED = Number(process.env.FC_SEED ?? 20261123);
const RUNS = Number(process.env.ISOLATION_RUNS ?? 40);
/** Each run sends 1 to this many requests (about half on average); a failure shrinks them. */
const MAX_REQUESTS_PER_RUN = 150;
/** Each run's companies and records live in their own id range of one shared database. */
const IDS_PER_RUN = 1000;
/** An id that no record of any type has. */
const MISSING_ID = 999_999_999;

const FIRST_NAMES = ['Ayşe', 'Ali', 'Zoë', 'Jürgen', 'Şule', 'Ana'];
const LAST_NAMES = ['Yılmaz', 'Müller', 'Öztürk', 'Müller-Lüdenscheidt', 'García'];
const TITLES = ['Taxi', 'Hotel Köln', 'Team lunch', 'Train İzmir', 'Taxi to airport'];
const MERCHANTS = ['Yellow Cab', 'Maritim', 'Café Zoë', 'TCDD', 'Uber'];
const SEARCHES = [
  'yil',
  'YILMAZ',
  'mul',
  'müller',
  'zoe',
  'e-1',
  'e-',
  'taxi',
  'koln',
  'izmir',
  'cafe',
  'ub',
  'a',
  'zzz',
  '%',
  '_',
];
const DATES = ['2026-01-05', '2026-01-20', '2026-02-01', '2026-02-14', '2026-03-01', '2026-03-31'];
const STAMPS = ['2026-01-01T08:00:00Z', '2026-02-01T08:00:00Z', '2026-03-01T08:00:00Z'];

const EMPLOYEE_STATUSES = ['active', 'inactive', 'terminated'];
const LEAVE_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'];
const EXPENSE_STATUSES = ['pending', 'approved', 'rejected', 'paid', 'cancelled'];

// ---- Datasets --------------------------------------------------------------------------

interface Person {
  id: number;
  companyId: number;
  first: string;
  last: string;
  number: string;
  status: string;
  hired: string;
}
interface Reference {
  id: number;
  companyId: number;
  active: boolean;
}
interface Leave {
  id: number;
  companyId: number;
  employeeId: number;
  typeId: number;
  status: string;
  start: string;
  end: string;
  created: string;
  updated: string;
}
interface Expense {
  id: number;
  companyId: number;
  employeeId: number;
  categoryId: number;
  status: string;
  title: string;
  merchant: string;
  amount: number;
  date: string;
  created: string;
  updated: string;
}
interface Dataset {
  companies: number[];
  people: Person[];
  types: Reference[];
  categories: Reference[];
  leaves: Leave[];
  expenses: Expense[];
}

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
const datasetShape = fc.record({
  companies: fc.integer({ min: 2, max: 4 }),
  people: fc.array(
    fc.record({
      owner: fc.nat(),
      first: pick(FIRST_NAMES),
      last: pick(LAST_NAMES),
      status: pick(EMPLOYEE_STATUSES),
      hired: pick(DATES),
    }),
    { maxLength: 14 },
  ),
  types: fc.array(fc.record({ owner: fc.nat(), active: fc.boolean() }), { maxLength: 8 }),
  categories: fc.array(fc.record({ owner: fc.nat(), active: fc.boolean() }), { maxLength: 8 }),
  leaves: fc.array(
    fc.record({
      owner: fc.nat(),
      person: fc.nat(),
      type: fc.nat(),
      status: pick(LEAVE_STATUSES),
      start: pick(DATES),
      days: fc.integer({ min: 0, max: 40 }),
      created: pick(STAMPS),
      updated: pick(STAMPS),
    }),
    { maxLength: 24 },
  ),
  expenses: fc.array(
    fc.record({
      owner: fc.nat(),
      person: fc.nat(),
      category: fc.nat(),
      status: pick(EXPENSE_STATUSES),
      title: pick(TITLES),
      merchant: pick(MERCHANTS),
      cents: fc.integer({ min: 0, max: 500_000 }),
      date: pick(DATES),
      created: pick(STAMPS),
      updated: pick(STAMPS),
    }),
    { maxLength: 24 },
  ),
});

type Shape = typeof datasetShape extends fc.Arbitrary<infer S> ? S : never;

const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** The shape's records with ids in run `run`'s range; a child picks among its company's parents. */
function materialize(shape: Shape, run: number): Dataset {
  const base = run * IDS_PER_RUN;
  const companies = Array.from({ length: shape.companies }, (_, i) => base + i + 1);
  const ownerOf = (n: number) => companies[n % companies.length] as number;
  const people = shape.people.map((p, i) => ({
    id: base + i + 1,
    companyId: ownerOf(p.owner),
    first: p.first,
    last: p.last,
    number: `E-${base + i + 1}`,
    status: p.status,
    hired: p.hired,
  }));
  const references = (specs: Shape['types']) =>
    specs.map((s, i) => ({ id: base + i + 1, companyId: ownerOf(s.owner), active: s.active }));
  const types = references(shape.types);
  const categories = references(shape.categories);
  const ofCompany = <T extends { companyId: number }>(rows: T[], companyId: number) =>
    rows.filter((row) => row.companyId === companyId);
  /** The company's employee and parent a child picks by index, or null when it has none. */
  const parentsOf = (companyId: number, parents: Reference[], person: number, parent: number) => {
    const [staff, own] = [ofCompany(people, companyId), ofCompany(parents, companyId)];
    if (staff.length === 0 || own.length === 0) return null;
    return {
      employeeId: (staff[person % staff.length] as Person).id,
      parentId: (own[parent % own.length] as Reference).id,
    };
  };
  const leaves = shape.leaves.flatMap((l, i): Leave[] => {
    const companyId = ownerOf(l.owner);
    const picked = parentsOf(companyId, types, l.person, l.type);
    if (!picked) return [];
    const { employeeId, parentId: typeId } = picked;
    const { status, start, created, updated } = l;
    const end = addDays(start, l.days);
    return [
      { id: base + i + 1, companyId, employeeId, typeId, status, start, end, created, updated },
    ];
  });
  const expenses = shape.expenses.flatMap((x, i): Expense[] => {
    const companyId = ownerOf(x.owner);
    const picked = parentsOf(companyId, categories, x.person, x.category);
    if (!picked) return [];
    const { employeeId, parentId: categoryId } = picked;
    const { status, title, merchant, date, created, updated } = x;
    const amount = x.cents / 100;
    return [
      {
        id: base + i + 1,
        companyId,
        employeeId,
        categoryId,
        status,
        title,
        merchant,
        amount,
        date,
        created,
        updated,
      },
    ];
  });
  return { companies, people, types, categories, leaves, expenses };
}

function importRecords(d: Dataset): unknown[] {
  return [
    ...d.companies.map((id) => company(id)),
    ...d.people.map((p) =>
      employee(p.companyId, p.id, {
        first_name: p.first,
        last_name: p.last,
        employee_number: p.number,
        status: p.status,
        hire_date: p.hired,
      }),
    ),
    ...d.types.map((r) => leaveType(r.companyId, r.id, { active: r.active })),
    ...d.categories.map((r) => category(r.companyId, r.id, { active: r.active })),
    ...d.leaves.map((l) =>
      leave(l.companyId, l.id, l.employeeId, l.typeId, {
        status: l.status,
        start_date: l.start,
        end_date: l.end,
        days: 1,
        created_at: l.created,
        updated_at: l.updated,
        approved_at: null,
      }),
    ),
    ...d.expenses.map((x) =>
      expense(x.companyId, x.id, x.employeeId, x.categoryId, {
        status: x.status,
        title: x.title,
        merchant_name: x.merchant,
        amount: x.amount.toFixed(2),
        tax_amount: '0.00',
        currency: 'EUR',
        expense_date: x.date,
        created_at: x.created,
        updated_at: x.updated,
        items: [],
        receipt: null,
      }),
    ),
  ];
}

// ---- Requests and the model ------------------------------------------------------------

type Resource = 'employees' | 'leaves' | 'expenses';
interface ListParams {
  page?: number;
  per_page?: number;
  sort?: string;
  status?: string[];
  search?: string;
  ids?: number[];
  parentIds?: number[];
  from?: string;
  to?: string;
}
type Request =
  | { key: number; op: 'list'; resource: Resource; params: ListParams }
  | { key: number; op: 'get'; resource: Resource; id: number }
  | { key: number; op: 'reference'; resource: 'leave-types' | 'expense-categories' };

const SORTS: Record<Resource, string[]> = {
  employees: ['id', 'full_name', 'employee_number', 'hire_date'],
  leaves: ['id', 'start_date', 'end_date', 'created_at', 'updated_at'],
  expenses: ['id', 'expense_date', 'amount', 'created_at', 'updated_at'],
};
const STATUSES: Record<Resource, string[]> = {
  employees: EMPLOYEE_STATUSES,
  leaves: LEAVE_STATUSES,
  expenses: EXPENSE_STATUSES,
};
/** Ids within a run: up to the longest list of records, plus ids nobody has. */
const anId = fc.integer({ min: 1, max: 26 });
const anEmployeeId = fc.integer({ min: 1, max: 15 });
const aParentId = fc.integer({ min: 1, max: 9 });

/** A filter in one list request of four: several at once mostly match nothing. */
const sometimes = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: value, weight: 1 });

function listParams(resource: Resource): fc.Arbitrary<ListParams> {
  const dated = resource !== 'employees';
  return fc.record(
    {
      page: fc.integer({ min: 1, max: 4 }),
      per_page: fc.integer({ min: 1, max: 5 }),
      sort: fc.tuple(pick(SORTS[resource]), fc.boolean()).map(([f, desc]) => (desc ? `-${f}` : f)),
      status: sometimes(fc.subarray(STATUSES[resource], { minLength: 1 })),
      search: sometimes(pick(SEARCHES)),
      ids: sometimes(fc.array(anEmployeeId, { minLength: 1, maxLength: 3 })),
      parentIds: sometimes(fc.array(aParentId, { minLength: 1, maxLength: 3 })),
      from: dated ? sometimes(pick(DATES)) : fc.constant(undefined),
      to: dated ? sometimes(pick(DATES)) : fc.constant(undefined),
    },
    { requiredKeys: [] },
  );
}

const request: fc.Arbitrary<Request> = fc.oneof(
  fc
    .record({
      key: fc.nat(),
      op: fc.constant('list' as const),
      resource: pick(['employees', 'leaves', 'expenses'] as const),
    })
    .chain((r) => listParams(r.resource).map((params) => ({ ...r, params }))),
  fc.record({
    key: fc.nat(),
    op: fc.constant('get' as const),
    resource: pick(['employees', 'leaves', 'expenses'] as const),
    id: anId,
  }),
  fc.record({
    key: fc.nat(),
    op: fc.constant('reference' as const),
    resource: pick(['leave-types', 'expense-categories'] as const),
  }),
);

function queryString(resource: Resource, p: ListParams, base: number): string {
  const q = new URLSearchParams();
  if (p.page) q.set('page', String(p.page));
  if (p.per_page) q.set('per_page', String(p.per_page));
  if (p.sort) q.set('sort', p.sort);
  if (p.status) q.set('status', p.status.join(','));
  if (p.search) q.set('search', p.search);
  if (resource !== 'employees') {
    if (p.ids) q.set('employee_id', p.ids.map((n) => base + n).join(','));
    if (p.parentIds) {
      const name = resource === 'leaves' ? 'leave_type_id' : 'category_id';
      q.set(name, p.parentIds.map((n) => base + n).join(','));
    }
    // An inverted range is a 422 (tested elsewhere): two dates go in order.
    let { from, to } = p;
    if (from && to && from > to) [from, to] = [to, from];
    if (from) q.set('from', from);
    if (to) q.set('to', to);
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** docs/api.md's folding, written out here so the model does not borrow the code under test. */
const fold = (text: string) =>
  text.normalize('NFKD').replace(/\p{M}/gu, '').replace(/ı/g, 'i').toLowerCase();
const contains = (text: string, search: string) => fold(text).includes(fold(search));

/** A sort field's value for a row, by the field's name in `sort=`. */
type SortKeys<T> = Record<string, (row: T) => string | number>;

/** Sorted as the API sorts: text by folded form, the id breaking ties in the same direction. */
function sorted<T extends { id: number }>(rows: T[], sort: string | null, keys: SortKeys<T>): T[] {
  const desc = sort?.startsWith('-') ?? false;
  const key = keys[(sort ?? 'id').replace(/^-/, '')] as (row: T) => string | number;
  const sign = desc ? -1 : 1;
  return [...rows].sort((x, y) => {
    const [kx, ky] = [key(x), key(y)];
    if (kx !== ky) return (kx < ky ? -1 : 1) * sign;
    return (x.id - y.id) * sign;
  });
}

function expectedList(d: Dataset, companyId: number, resource: Resource, url: string) {
  const q = new URL(url, 'http://x').searchParams;
  const list = (name: string) => q.get(name)?.split(',').map(Number);
  const [status, search, from, to] = [
    q.get('status')?.split(','),
    q.get('search'),
    q.get('from'),
    q.get('to'),
  ];
  const person = (id: number) => d.people.find((p) => p.id === id) as Person;
  const named = (p: Person, s: string) =>
    contains(p.first, s) ||
    contains(p.last, s) ||
    contains(`${p.first} ${p.last}`, s) ||
    contains(p.number, s);
  let rows: Array<{ id: number }>;
  if (resource === 'employees') {
    const found = d.people.filter(
      (p) =>
        p.companyId === companyId &&
        (!status || status.includes(p.status)) &&
        (!search || named(p, search)),
    );
    rows = sorted(found, q.get('sort'), {
      id: (p) => p.id,
      full_name: (p) => fold(`${p.first} ${p.last}`),
      employee_number: (p) => fold(p.number),
      hire_date: (p) => p.hired,
    });
  } else if (resource === 'leaves') {
    const [employees, types] = [list('employee_id'), list('leave_type_id')];
    const found = d.leaves.filter(
      (l) =>
        l.companyId === companyId &&
        (!status || status.includes(l.status)) &&
        (!employees || employees.includes(l.employeeId)) &&
        (!types || types.includes(l.typeId)) &&
        (!from || l.end >= from) &&
        (!to || l.start <= to) &&
        (!search || named(person(l.employeeId), search)),
    );
    rows = sorted(found, q.get('sort'), {
      id: (l) => l.id,
      start_date: (l) => l.start,
      end_date: (l) => l.end,
      created_at: (l) => l.created,
      updated_at: (l) => l.updated,
    });
  } else {
    const [employees, categories] = [list('employee_id'), list('category_id')];
    const found = d.expenses.filter(
      (x) =>
        x.companyId === companyId &&
        (!status || status.includes(x.status)) &&
        (!employees || employees.includes(x.employeeId)) &&
        (!categories || categories.includes(x.categoryId)) &&
        (!from || x.date >= from) &&
        (!to || x.date <= to) &&
        (!search || contains(x.title, search) || contains(x.merchant, search)),
    );
    rows = sorted(found, q.get('sort'), {
      id: (x) => x.id,
      expense_date: (x) => x.date,
      amount: (x) => x.amount,
      created_at: (x) => x.created,
      updated_at: (x) => x.updated,
    });
  }
  const page = Number(q.get('page') ?? 1);
  const perPage = Number(q.get('per_page') ?? 25);
  return {
    ids: rows.slice((page - 1) * perPage, page * perPage).map((r) => r.id),
    total: rows.length,
  };
}

// ---- The property ----------------------------------------------------------------------

interface Embedded {
  id: number;
}
type Json = {
  id: number;
  employee?: Embedded;
  leave_type?: Embedded;
  category?: Embedded;
  substitute_employee?: Embedded | null;
};

/** Checks one answer against the model; returns how many records it compared. */
async function checkRequest(
  api: TestApi,
  d: Dataset,
  keys: string[],
  r: Request,
  base: number,
): Promise<number> {
  const companyId = d.companies[r.key % d.companies.length] as number;
  const key = keys[r.key % keys.length] as string;
  const own = (rows: Array<{ id: number; companyId: number }>) =>
    new Set(rows.filter((row) => row.companyId === companyId).map((row) => row.id));
  const ownPeople = own(d.people);
  if (r.op === 'reference') {
    const res = await api.get(`/${r.resource}`, key);
    assert.equal(res.status, 200, res.body);
    const rows = r.resource === 'leave-types' ? d.types : d.categories;
    const expected = rows
      .filter((row) => row.companyId === companyId && row.active)
      .map((row) => row.id);
    // Earlier runs' companies hold other ids; this company's list is exactly its active ones.
    assert.deepEqual(
      res.json.data.map((row: Json) => row.id),
      expected,
      r.resource,
    );
    return expected.length;
  }
  const rowsOf = { employees: d.people, leaves: d.leaves, expenses: d.expenses }[r.resource];
  if (r.op === 'get') {
    const id = base + r.id;
    const res = await api.get(`/${r.resource}/${id}`, key);
    if (own(rowsOf).has(id)) {
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.data.id, id);
      return 1;
    }
    const missing = await api.get(`/${r.resource}/${MISSING_ID}`, key);
    assert.equal(res.status, 404, `${r.resource}/${id}: ${res.body}`);
    assert.equal(res.body, missing.body, `${r.resource}/${id}`);
    return 0;
  }
  const path = `/${r.resource}${queryString(r.resource, r.params, base)}`;
  const res = await api.get(path, key);
  assert.equal(res.status, 200, `${path}: ${res.body}`);
  const expected = expectedList(d, companyId, r.resource, path);
  const data = res.json.data as Json[];
  for (const row of data) {
    assert.ok(own(rowsOf).has(row.id), `${path}: record ${row.id} is not company ${companyId}'s`);
    if (row.employee) assert.ok(ownPeople.has(row.employee.id), `${path}: embedded employee`);
    if (row.leave_type) assert.ok(own(d.types).has(row.leave_type.id), `${path}: leave type`);
    if (row.category) assert.ok(own(d.categories).has(row.category.id), `${path}: category`);
  }
  assert.deepEqual(
    data.map((row) => row.id),
    expected.ids,
    path,
  );
  assert.equal(res.json.meta.total, expected.total, path);
  return data.length;
}

describeEachDialect('isolation property', (dialect) => {
  it(`${RUNS} random datasets × up to ${MAX_REQUESTS_PER_RUN} random requests answer exactly the key's company (seed ${SEED})`, async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    let run = 0;
    let checked = 0;
    let records = 0;
    await fc.assert(
      fc.asyncProperty(
        datasetShape,
        fc.array(request, { minLength: 1, maxLength: MAX_REQUESTS_PER_RUN, size: 'max' }),
        async (shape, requests) => {
          // Every execution (shrinking included) gets ids no earlier one used.
          run += 1;
          const dataset = materialize(shape, run);
          await api.load(importRecords(dataset));
          const keys = await Promise.all(dataset.companies.map((id) => api.createKey(id)));
          for (const r of requests) {
            records += await checkRequest(api, dataset, keys, r, run * IDS_PER_RUN);
            checked += 1;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    t.diagnostic(
      `${run} datasets, ${checked} requests, ${records} records checked against the model`,
    );
  });
});
