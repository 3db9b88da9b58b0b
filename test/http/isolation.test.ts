import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setCompanyActive } from '../../src/db/companies.queries.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { listApiKeys, revokeApiKey } from '../../src/db/keys.queries.ts';
import { SCOPES } from '../../src/keys/scopes.ts';
import { type ApiResponse, type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { pageMeta } from '../helpers/problems.ts';
import {
  CANARY,
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeJpeg,
} from '../helpers/records.ts';

/**
 * Two companies whose records interleave by id for every type (A's are 1, 3, 5, …; B's 2, 4,
 * 6, …) and look alike, so every filter matches records of both. Each answer to one company's
 * key is compared with a small model: the fixture arrays below, filtered to that company.
 */

const A = 1;
const B = 2;
/** An id no record of any type has, in any company. */
const MISSING_ID = 999_999;

/** The id of a company's n-th record (from 0) of any type: A's are odd, B's even. */
const idOf = (companyId: number, n: number) => 2 * n + companyId;
const other = (companyId: number) => (companyId === A ? B : A);

/** Names, files and text markers of each company: a marker is text only its data holds. */
const PROFILES = {
  [A]: {
    name: 'Acme Holding',
    domain: 'acme.test',
    receipt: 'acme.jpg',
    markers: ['Acme', '@acme.test'],
  },
  [B]: {
    name: 'Beta Trading',
    domain: 'beta.test',
    receipt: 'beta.jpg',
    markers: ['Beta', '@beta.test'],
  },
};
const profile = (companyId: number) => (companyId === A ? PROFILES[A] : PROFILES[B]);

// ---- The fixture, as plain rows ---------------------------------------------------------

interface EmployeeRow {
  companyId: number;
  id: number;
  number: string;
  firstName: string;
  lastName: string;
  status: string;
  hireDate: string;
}

interface ReferenceRow {
  companyId: number;
  id: number;
  name: string;
  key: string;
  active: boolean;
}

interface LeaveRow {
  companyId: number;
  id: number;
  employeeId: number;
  leaveTypeId: number;
  substituteId: number | null;
  status: string;
  startDate: string;
  endDate: string;
  createdAt: string;
  updatedAt: string;
}

interface ExpenseRow {
  companyId: number;
  id: number;
  employeeId: number;
  categoryId: number;
  status: string;
  title: string;
  merchant: string;
  date: string;
  amount: string;
  createdAt: string;
  updatedAt: string;
  hasReceipt: boolean;
}

/** A spec ending in B_ONLY exists in company B alone; every other spec exists in both. */
const B_ONLY = 'B only';
type BOnly = typeof B_ONLY;
const day = (monthDay: string) => `2026-${monthDay}`;
/** `'03-05 18'` is 2026-03-05T18:00:00Z. */
const at = (monthDayHour: string) => `2026-${monthDayHour.replace(' ', 'T')}:00:00Z`;

type PersonSpec = [
  number: string,
  first: string,
  last: string,
  status: string,
  hired: string,
  only?: BOnly,
];
const PEOPLE: PersonSpec[] = [
  ['P-100', 'Ayşe', 'Yılmaz', 'active', '2020-01-15'],
  ['P-101', 'Mehmet', 'Öztürk', 'active', '2019-06-01'],
  ['P-102', 'Ayşe', 'Demir', 'inactive', '2021-03-10'],
  ['P-103', 'Zeynep', 'Yılmaz', 'terminated', '2018-11-20'],
  ['P-104', 'Émile', 'Müller', 'active', '2020-01-15'],
  ['P-105', 'Ayşe', 'Yılmaz', 'active', '2017-01-01', B_ONLY],
];

type ReferenceSpec = [name: string, key: string, active: boolean];
const LEAVE_TYPES: ReferenceSpec[] = [
  ['Annual leave', 'annual', true],
  ['Sick leave', 'sick', true],
  ['Unpaid leave (old)', 'unpaid', false],
];
const CATEGORIES: ReferenceSpec[] = [
  ['Travel', 'travel', true],
  ['Meals', 'meals', true],
  ['Legacy', 'legacy', false],
];

/** Employees, leave types and substitutes by spec position (n), made ids per company. */
type LeaveSpec = [
  employee: number,
  type: number,
  substitute: number | null,
  status: string,
  start: string,
  end: string,
  created: string,
  updated: string,
  only?: BOnly,
];
const LEAVES: LeaveSpec[] = [
  [0, 0, 1, 'approved', '03-02', '03-04', '02-18 08', '02-20 08'],
  [1, 1, null, 'pending', '03-03', '03-03', '03-01 09', '03-01 09'],
  [0, 2, null, 'rejected', '04-10', '04-14', '03-10 12', '03-15 12'],
  [3, 0, 0, 'cancelled', '02-25', '03-02', '02-10 10', '02-26 10'],
  [4, 1, null, 'approved', '05-01', '05-05', '04-01 08', '04-20 08'],
  [2, 0, 4, 'approved', '03-04', '03-10', '02-18 08', '03-05 08'],
  [5, 0, 0, 'approved', '03-03', '03-05', '02-21 08', '03-01 09', B_ONLY],
];

/** Employees and categories by spec position (n), made ids per company. */
type ExpenseSpec = [
  employee: number,
  category: number,
  status: string,
  title: string,
  merchant: string,
  date: string,
  amount: string,
  created: string,
  updated: string,
  receipt: boolean,
  only?: BOnly,
];
const EXPENSES: ExpenseSpec[] = [
  [0, 0, 'paid', 'Taxi', 'Yellow Cab', '03-05', '1250.50', '03-05 18', '03-10 10', true],
  [1, 1, 'pending', 'Team lunch', 'Köfteci', '03-06', '340.00', '03-06 12', '03-06 12', false],
  [0, 2, 'approved', 'Hotel', 'Grand Hotel', '03-12', '4200.00', '03-13 08', '03-14 08', true],
  [3, 0, 'rejected', 'Taxi', 'Yellow Cab', '02-28', '980.25', '02-28 20', '03-01 08', false],
  [4, 1, 'paid', 'Dinner', 'Café Müller', '03-05', '340.00', '03-05 21', '03-20 08', false],
  [2, 0, 'cancelled', 'Train', 'TCDD', '04-02', '150.75', '04-02 07', '04-03 08', false],
  [5, 0, 'paid', 'Taxi', 'Yellow Cab', '03-05', '1250.50', '03-05 19', '03-10 10', true, B_ONLY],
];

/** One row per company and spec, ordered by id so the import interleaves the companies too. */
function rowsOf<S extends unknown[], R extends { id: number }>(
  specs: S[],
  toRow: (companyId: number, spec: S, id: number) => R,
): R[] {
  return [A, B]
    .flatMap((companyId) =>
      specs.flatMap((spec, n) =>
        spec.at(-1) === B_ONLY && companyId !== B
          ? []
          : [toRow(companyId, spec, idOf(companyId, n))],
      ),
    )
    .sort((x, y) => x.id - y.id);
}

const employees: EmployeeRow[] = rowsOf(PEOPLE, (companyId, spec, id) => {
  const [number, firstName, lastName, status, hireDate] = spec;
  return { companyId, id, number, firstName, lastName, status, hireDate };
});
const referenceRow = (companyId: number, [name, key, active]: ReferenceSpec, id: number) => ({
  companyId,
  id,
  name,
  key,
  active,
});
const leaveTypes: ReferenceRow[] = rowsOf(LEAVE_TYPES, referenceRow);
const categories: ReferenceRow[] = rowsOf(CATEGORIES, referenceRow);
const leaves: LeaveRow[] = rowsOf(LEAVES, (companyId, spec, id) => {
  const [employee, type, substitute, status, start, end, created, updated] = spec;
  return {
    companyId,
    id,
    employeeId: idOf(companyId, employee),
    leaveTypeId: idOf(companyId, type),
    substituteId: substitute === null ? null : idOf(companyId, substitute),
    status,
    startDate: day(start),
    endDate: day(end),
    createdAt: at(created),
    updatedAt: at(updated),
  };
});
const expenses: ExpenseRow[] = rowsOf(EXPENSES, (companyId, spec, id) => {
  const [employee, category, status, title, merchant, date, amount, created, updated, receipt] =
    spec;
  return {
    companyId,
    id,
    employeeId: idOf(companyId, employee),
    categoryId: idOf(companyId, category),
    status,
    title,
    merchant,
    date: day(date),
    amount,
    createdAt: at(created),
    updatedAt: at(updated),
    hasReceipt: receipt,
  };
});

const fullName = (e: EmployeeRow) => `${e.firstName} ${e.lastName}`;
const employeeById = (id: number) => employees.find((e) => e.id === id) as EmployeeRow;
const ownedBy =
  (companyId: number) =>
  <T extends { companyId: number }>(row: T) =>
    row.companyId === companyId;

function importRecords(): unknown[] {
  const sensitive = (e: EmployeeRow) =>
    e.companyId === B
      ? {
          national_id: `${CANARY}-B-NID-${e.id}`,
          iban: `${CANARY}-B-IBAN-${e.id}`,
          address: `${CANARY} B-street ${e.id}`,
        }
      : {};
  return [
    company(A, { name: profile(A).name }),
    company(B, { name: profile(B).name }),
    ...employees.map((e) =>
      employee(e.companyId, e.id, {
        employee_number: e.number,
        first_name: e.firstName,
        last_name: e.lastName,
        email: `e${e.id}@${profile(e.companyId).domain}`,
        status: e.status,
        hire_date: e.hireDate,
        ...sensitive(e),
      }),
    ),
    ...leaveTypes.map((t) =>
      leaveType(t.companyId, t.id, { name: t.name, type_key: t.key, active: t.active }),
    ),
    ...categories.map((c) => category(c.companyId, c.id, { name: c.name, active: c.active })),
    ...leaves.map((l) =>
      leave(l.companyId, l.id, l.employeeId, l.leaveTypeId, {
        status: l.status,
        start_date: l.startDate,
        end_date: l.endDate,
        substitute_employee_id: l.substituteId,
        approved_at: l.status === 'approved' ? l.updatedAt : null,
        created_at: l.createdAt,
        updated_at: l.updatedAt,
      }),
    ),
    ...expenses.map((x) =>
      expense(x.companyId, x.id, x.employeeId, x.categoryId, {
        status: x.status,
        title: x.title,
        merchant_name: x.merchant,
        expense_date: x.date,
        amount: x.amount,
        items: [{ name: x.title, quantity: 1, price: x.amount }],
        approved_at: ['approved', 'paid'].includes(x.status) ? x.updatedAt : null,
        paid_at: x.status === 'paid' ? x.updatedAt : null,
        submitted_at: x.createdAt,
        created_at: x.createdAt,
        updated_at: x.updatedAt,
        receipt: x.hasReceipt ? { original: profile(x.companyId).receipt } : null,
      }),
    ),
  ];
}

interface TwoCompanies {
  api: TestApi;
  /** The raw key of a company. */
  keyOf: (companyId: number) => string;
}

/** A fresh database holding both companies, and a key of each (all scopes, no rate limit). */
async function useTwoCompanies(t: TestContext, dialect: Dialect): Promise<TwoCompanies> {
  const api = await useApi(t, dialect);
  await writeJpeg(api.dir, profile(A).receipt, 40, 30);
  await writeJpeg(api.dir, profile(B).receipt, 64, 48);
  await api.load(importRecords());
  const keyA = await api.createKey(A, { name: 'A key' });
  const keyB = await api.createKey(B, { name: 'B key' });
  return { api, keyOf: (companyId) => (companyId === A ? keyA : keyB) };
}

// ---- The model: what a list must answer ---------------------------------------------------

type Owned = { id: number; companyId: number };

/** The folding of docs/api.md: NFKD, no combining marks, ı → i, lower case. */
const fold = (text: string) =>
  text.normalize('NFKD').replace(/\p{M}/gu, '').replace(/ı/g, 'i').toLowerCase();
const contains = (text: string, search: string) => fold(text).includes(fold(search));

interface ListCase<T> {
  query: string;
  where?: (row: T) => boolean;
  /** Default: by id ascending. The id breaks ties in the same direction. */
  sort?: { key: (row: T) => string | number; desc?: boolean };
  page?: number;
  perPage?: number;
}

/** The other company's ids alone, as filters: an empty list, not an error. */
const none = () => false;

function sortRows<T extends { id: number }>(rows: T[], sort: ListCase<T>['sort']): T[] {
  const key = sort?.key ?? ((row: T) => row.id);
  const sign = sort?.desc ? -1 : 1;
  return [...rows].sort((x, y) => {
    const [kx, ky] = [key(x), key(y)];
    if (kx !== ky) return (kx < ky ? -1 : 1) * sign;
    return (x.id - y.id) * sign;
  });
}

/** The page of the company's matching rows the case asks for, and its meta. */
function expectedPage<T extends Owned>(all: T[], companyId: number, c: ListCase<T>) {
  const matching = sortRows(all.filter(ownedBy(companyId)).filter(c.where ?? (() => true)), c.sort);
  const page = c.page ?? 1;
  const perPage = c.perPage ?? 25;
  const rows = matching.slice((page - 1) * perPage, page * perPage);
  return { rows, meta: pageMeta(matching.length, page, perPage) };
}

function employeeCases(): ListCase<EmployeeRow>[] {
  const matches = (search: string) => (e: EmployeeRow) =>
    [e.firstName, e.lastName, fullName(e), e.number].some((field) => contains(field, search));
  return [
    { query: '' },
    { query: '?status=active', where: (e) => e.status === 'active' },
    {
      query: '?status=inactive,terminated',
      where: (e) => ['inactive', 'terminated'].includes(e.status),
    },
    { query: '?search=yilmaz', where: matches('yilmaz') },
    { query: '?search=AY%C5%9EE', where: matches('AYŞE') },
    { query: '?search=ayse%20yilmaz', where: matches('ayse yilmaz') },
    { query: '?search=muller', where: matches('muller') },
    { query: '?search=P-10', where: matches('P-10') },
    { query: '?search=p-101', where: matches('p-101') },
    {
      query: '?status=active&search=ayse',
      where: (e) => e.status === 'active' && matches('ayse')(e),
    },
    { query: '?sort=full_name', sort: { key: (e) => fold(fullName(e)) } },
    { query: '?sort=-full_name', sort: { key: (e) => fold(fullName(e)), desc: true } },
    { query: '?sort=-hire_date', sort: { key: (e) => e.hireDate, desc: true } },
    { query: '?sort=employee_number', sort: { key: (e) => fold(e.number) } },
    { query: '?per_page=2&page=2', perPage: 2, page: 2 },
    { query: '?per_page=2&page=9', perPage: 2, page: 9 },
    {
      query: '?status=active&sort=-hire_date&per_page=2&page=2',
      where: (e) => e.status === 'active',
      sort: { key: (e) => e.hireDate, desc: true },
      perPage: 2,
      page: 2,
    },
  ];
}

function leaveCases(me: number): ListCase<LeaveRow>[] {
  const mine = (n: number) => idOf(me, n);
  const theirs = (n: number) => idOf(other(me), n);
  const mixedEmployees = [mine(0), theirs(0), mine(3), theirs(3)];
  const theirEmployees = [theirs(0), theirs(1), theirs(3), theirs(5)];
  const mixedTypes = [theirs(0), mine(1), theirs(1), mine(2)];
  const employeeMatches = (search: string) => (l: LeaveRow) => {
    const e = employeeById(l.employeeId);
    return [e.firstName, e.lastName, fullName(e), e.number].some((f) => contains(f, search));
  };
  return [
    { query: '' },
    { query: '?status=approved', where: (l) => l.status === 'approved' },
    {
      query: '?status=pending,cancelled',
      where: (l) => ['pending', 'cancelled'].includes(l.status),
    },
    { query: `?employee_id=${mine(0)}`, where: (l) => l.employeeId === mine(0) },
    { query: `?employee_id=${theirs(0)}`, where: none },
    { query: `?employee_id=${theirEmployees.join(',')}`, where: none },
    {
      query: `?employee_id=${mixedEmployees.join(',')}`,
      where: (l) => mixedEmployees.includes(l.employeeId),
    },
    { query: `?leave_type_id=${mine(0)}`, where: (l) => l.leaveTypeId === mine(0) },
    { query: `?leave_type_id=${theirs(0)}`, where: none },
    { query: `?leave_type_id=${mine(2)}`, where: (l) => l.leaveTypeId === mine(2) },
    {
      query: `?leave_type_id=${mixedTypes.join(',')}`,
      where: (l) => mixedTypes.includes(l.leaveTypeId),
    },
    {
      query: '?from=2026-03-03&to=2026-03-04',
      where: (l) => l.startDate <= '2026-03-04' && l.endDate >= '2026-03-03',
    },
    { query: '?from=2026-04-01', where: (l) => l.endDate >= '2026-04-01' },
    { query: '?to=2026-03-01', where: (l) => l.startDate <= '2026-03-01' },
    { query: '?search=yilmaz', where: employeeMatches('yilmaz') },
    { query: '?search=MEHMET', where: employeeMatches('MEHMET') },
    { query: '?search=p-104', where: employeeMatches('p-104') },
    {
      query: '?updated_since=2026-03-01T09:00:00Z',
      where: (l) => l.updatedAt >= '2026-03-01T09:00:00Z',
    },
    {
      query: '?updated_since=2026-03-05T11:00:00%2B03:00',
      where: (l) => l.updatedAt >= '2026-03-05T08:00:00Z',
    },
    { query: '?sort=-start_date', sort: { key: (l) => l.startDate, desc: true } },
    { query: '?sort=end_date', sort: { key: (l) => l.endDate } },
    { query: '?sort=-created_at', sort: { key: (l) => l.createdAt, desc: true } },
    { query: '?sort=updated_at', sort: { key: (l) => l.updatedAt } },
    {
      query: `?status=approved&employee_id=${mixedEmployees.join(',')}&from=2026-03-01&sort=-start_date`,
      where: (l) =>
        l.status === 'approved' &&
        mixedEmployees.includes(l.employeeId) &&
        l.endDate >= '2026-03-01',
      sort: { key: (l) => l.startDate, desc: true },
    },
    { query: '?per_page=2&page=3', perPage: 2, page: 3 },
    { query: '?per_page=4&page=3', perPage: 4, page: 3 },
  ];
}

function expenseCases(me: number): ListCase<ExpenseRow>[] {
  const mine = (n: number) => idOf(me, n);
  const theirs = (n: number) => idOf(other(me), n);
  const mixedEmployees = [theirs(0), mine(0), theirs(4), mine(4)];
  const mixedCategories = [mine(0), theirs(0), theirs(1), theirs(2), mine(2)];
  const theirCategories = [theirs(0), theirs(1), theirs(2)];
  const matches = (search: string) => (x: ExpenseRow) =>
    contains(x.title, search) || contains(x.merchant, search);
  return [
    { query: '' },
    { query: '?status=paid', where: (x) => x.status === 'paid' },
    { query: '?status=pending,rejected', where: (x) => ['pending', 'rejected'].includes(x.status) },
    { query: `?employee_id=${mine(0)}`, where: (x) => x.employeeId === mine(0) },
    { query: `?employee_id=${theirs(0)}`, where: none },
    {
      query: `?employee_id=${mixedEmployees.join(',')}`,
      where: (x) => mixedEmployees.includes(x.employeeId),
    },
    { query: `?category_id=${mine(0)}`, where: (x) => x.categoryId === mine(0) },
    { query: `?category_id=${theirs(0)}`, where: none },
    { query: `?category_id=${mine(2)}`, where: (x) => x.categoryId === mine(2) },
    { query: `?category_id=${theirCategories.join(',')}`, where: none },
    {
      query: `?category_id=${mixedCategories.join(',')}`,
      where: (x) => mixedCategories.includes(x.categoryId),
    },
    {
      query: '?from=2026-03-05&to=2026-03-06',
      where: (x) => x.date >= '2026-03-05' && x.date <= '2026-03-06',
    },
    { query: '?from=2026-03-12', where: (x) => x.date >= '2026-03-12' },
    { query: '?to=2026-03-01', where: (x) => x.date <= '2026-03-01' },
    { query: '?search=taxi', where: matches('taxi') },
    { query: '?search=YELLOW%20CAB', where: matches('YELLOW CAB') },
    { query: '?search=muller', where: matches('muller') },
    { query: '?search=kofte', where: matches('kofte') },
    {
      query: '?updated_since=2026-03-10T10:00:00Z',
      where: (x) => x.updatedAt >= '2026-03-10T10:00:00Z',
    },
    { query: '?sort=-amount', sort: { key: (x) => Number(x.amount), desc: true } },
    { query: '?sort=amount', sort: { key: (x) => Number(x.amount) } },
    { query: '?sort=expense_date', sort: { key: (x) => x.date } },
    { query: '?sort=-created_at', sort: { key: (x) => x.createdAt, desc: true } },
    { query: '?sort=-updated_at', sort: { key: (x) => x.updatedAt, desc: true } },
    {
      query: `?status=paid,approved&category_id=${mixedCategories.join(',')}&to=2026-03-31&search=a`,
      where: (x) =>
        ['paid', 'approved'].includes(x.status) &&
        mixedCategories.includes(x.categoryId) &&
        x.date <= '2026-03-31' &&
        matches('a')(x),
    },
    { query: '?per_page=2&page=2', perPage: 2, page: 2 },
    { query: '?per_page=5&page=2', perPage: 5, page: 2 },
  ];
}

// ---- Checks ------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: records are read from parsed JSON bodies.
type Json = any;

/**
 * A list resource: its path, its fixture rows, what an answer shows of a record beside the
 * model's view of the same record, and every record a record names, with the rows its id is in.
 */
interface Resource<T extends Owned> {
  path: string;
  rows: T[];
  shown: (record: Json) => unknown;
  modelled: (row: T) => unknown;
  refs: (record: Json) => [what: string, rows: Owned[], id: number][];
}

const EMPLOYEES: Resource<EmployeeRow> = {
  path: '/employees',
  rows: employees,
  shown: (r) => ({ id: r.id, number: r.employee_number, name: r.full_name }),
  modelled: (e) => ({ id: e.id, number: e.number, name: fullName(e) }),
  refs: (r) => [['employee', employees, r.id]],
};

const LEAVES_RESOURCE: Resource<LeaveRow> = {
  path: '/leaves',
  rows: leaves,
  shown: (r) => ({
    id: r.id,
    employee: r.employee.id,
    leave_type: r.leave_type.id,
    substitute: r.substitute_employee?.id ?? null,
  }),
  modelled: (l) => ({
    id: l.id,
    employee: l.employeeId,
    leave_type: l.leaveTypeId,
    substitute: l.substituteId,
  }),
  refs: (r) => [
    ['leave', leaves, r.id],
    ['employee', employees, r.employee.id],
    ['leave type', leaveTypes, r.leave_type.id],
    ...(r.substitute_employee
      ? [['substitute', employees, r.substitute_employee.id] as [string, Owned[], number]]
      : []),
  ],
};

const EXPENSES_RESOURCE: Resource<ExpenseRow> = {
  path: '/expenses',
  rows: expenses,
  shown: (r) => ({
    id: r.id,
    employee: r.employee.id,
    category: r.category.id,
    has_receipt: r.has_receipt,
  }),
  modelled: (x) => ({
    id: x.id,
    employee: x.employeeId,
    category: x.categoryId,
    has_receipt: x.hasReceipt,
  }),
  refs: (r) => [
    ['expense', expenses, r.id],
    ['employee', employees, r.employee.id],
    ['category', categories, r.category.id],
  ],
};

/** Every record of the answer, and every record it embeds, is the company's own. */
function assertOwn<T extends Owned>(resource: Resource<T>, records: Json[], companyId: number) {
  for (const record of records) {
    for (const [what, rows, id] of resource.refs(record)) {
      const owner = rows.find((row) => row.id === id)?.companyId;
      assert.equal(owner, companyId, `record ${record.id}: ${what} ${id} is company ${owner}'s`);
    }
  }
}

function assertNoForeignText(res: ApiResponse, companyId: number) {
  for (const marker of profile(other(companyId)).markers) {
    assert.ok(!res.body.includes(marker), `the answer contains "${marker}": ${res.body}`);
  }
}

async function checkList<T extends Owned>(
  api: TestApi,
  key: string,
  companyId: number,
  resource: Resource<T>,
  c: ListCase<T>,
) {
  const res = await api.get(`${resource.path}${c.query}`, key);
  assert.equal(res.status, 200, res.body);
  const { rows, meta } = expectedPage(resource.rows, companyId, c);
  assertOwn(resource, res.json.data, companyId);
  assertNoForeignText(res, companyId);
  assert.deepEqual(res.json.data.map(resource.shown), rows.map(resource.modelled));
  assert.deepEqual(res.json.meta, meta);
}

/** Each of the company's own records, by id: itself, naming only the company's records. */
async function checkOwnRecords<T extends Owned>(
  api: TestApi,
  key: string,
  companyId: number,
  resource: Resource<T>,
) {
  for (const row of resource.rows.filter(ownedBy(companyId))) {
    const res = await api.get(`${resource.path}/${row.id}`, key);
    assert.equal(res.status, 200, res.body);
    assertOwn(resource, [res.json.data], companyId);
    assertNoForeignText(res, companyId);
    assert.deepEqual(resource.shown(res.json.data), resource.modelled(row));
  }
}

/** Headers that legitimately differ between two answers: the request id and the rate counters. */
const VOLATILE_HEADERS = new Set([
  'x-request-id',
  'date',
  'ratelimit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);
const stableHeaders = (res: ApiResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VOLATILE_HEADERS.has(name)));

/** Record-addressing operations, each with the rows its ids name. */
const SINGLE_RECORD_OPERATIONS: {
  path: (id: number) => string;
  rows: Owned[];
}[] = [
  { path: (id) => `/employees/${id}`, rows: employees },
  { path: (id) => `/leaves/${id}`, rows: leaves },
  { path: (id) => `/expenses/${id}`, rows: expenses },
  { path: (id) => `/expenses/${id}/receipt`, rows: expenses },
  { path: (id) => `/expenses/${id}/receipt?variant=processed`, rows: expenses },
  { path: (id) => `/expenses/${id}/receipt?variant=original`, rows: expenses },
];

/** Every one of the other company's records answers exactly what an id no company has answers. */
async function checkForeignIdsAreMissing(api: TestApi, key: string, companyId: number) {
  for (const operation of SINGLE_RECORD_OPERATIONS) {
    const missing = await api.get(operation.path(MISSING_ID), key);
    assert.equal(missing.status, 404, missing.body);
    assert.equal(missing.json.code, 'not_found', missing.body);
    for (const row of operation.rows.filter(ownedBy(other(companyId)))) {
      const path = operation.path(row.id);
      const res = await api.get(path, key);
      assert.equal(res.status, 404, `${path}: ${res.body}`);
      assert.equal(res.body, missing.body, path);
      assert.deepEqual(stableHeaders(res), stableHeaders(missing), path);
    }
  }
}

/** Polls until the check holds; docs/admin-api.md gives key and company changes 2 s to apply. */
async function eventually(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 2500;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within 2 s: ${what}`);
    await sleep(100);
  }
}

/** Answers to A's key that company B's state must not change. */
const A_VIEW = [
  '/employees',
  '/employees?search=yilmaz',
  '/employees/1',
  '/employees/2',
  '/leaves',
  '/leaves?employee_id=1,2,3,4',
  '/leaves/1',
  '/leaves/2',
  '/leave-types',
  '/expenses',
  '/expenses?category_id=1,2&search=taxi',
  '/expenses/1',
  '/expenses/2',
  '/expenses/2/receipt',
  '/expense-categories',
  '/changes?limit=1000',
];

// ---- The suites ---------------------------------------------------------------------------

it('isolation fixture: ids interleave and both companies hold inactive and receipt records', () => {
  for (const rows of [employees, leaveTypes, categories, leaves, expenses]) {
    assert.ok(rows.filter(ownedBy(A)).every((row) => row.id % 2 === 1));
    assert.ok(rows.filter(ownedBy(B)).every((row) => row.id % 2 === 0));
  }
  for (const companyId of [A, B]) {
    assert.ok(leaveTypes.some((lt) => lt.companyId === companyId && !lt.active));
    assert.ok(categories.some((c) => c.companyId === companyId && !c.active));
    assert.ok(expenses.some((x) => x.companyId === companyId && x.hasReceipt));
  }
});

describeEachDialect('company isolation', (dialect) => {
  for (const me of [A, B]) {
    const label = me === A ? 'A' : 'B';
    describe(`with company ${label}'s key`, () => {
      it(`GET /me shows company ${label} and its key`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        const [key] = await listApiKeys(api.handle.db, me);
        const res = await api.get('/me', keyOf(me));
        assert.equal(res.status, 200, res.body);
        assert.deepEqual(res.json, {
          company: { id: me, name: profile(me).name, timezone: 'Europe/Istanbul' },
          api_key: {
            id: key?.id,
            name: `${label} key`,
            scopes: [...SCOPES],
            last_used_at: res.json.api_key.last_used_at,
          },
          access: 'read-only',
          rate_limit: { per_minute: 1_000_000, per_hour: 1_000_000 },
        });
      });

      it(`GET /employees lists only company ${label}'s employees, for every filter`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        for (const c of employeeCases()) {
          await t.test(`/employees${c.query}`, () => checkList(api, keyOf(me), me, EMPLOYEES, c));
        }
      });

      it(`GET /leaves lists only company ${label}'s leaves, for every filter`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        for (const c of leaveCases(me)) {
          await t.test(`/leaves${c.query}`, () =>
            checkList(api, keyOf(me), me, LEAVES_RESOURCE, c),
          );
        }
      });

      it(`GET /expenses lists only company ${label}'s expenses, for every filter`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        for (const c of expenseCases(me)) {
          await t.test(`/expenses${c.query}`, () =>
            checkList(api, keyOf(me), me, EXPENSES_RESOURCE, c),
          );
        }
      });

      it(`GET /leave-types and /expense-categories list company ${label}'s active ones`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        const types = await api.get('/leave-types', keyOf(me));
        assert.equal(types.status, 200, types.body);
        assert.deepEqual(types.json, {
          data: leaveTypes
            .filter((lt) => lt.companyId === me && lt.active)
            .map((lt) => ({
              id: lt.id,
              name: lt.name,
              type_key: lt.key,
              description: null,
              max_days_per_year: 14,
              quota_type: 'yearly',
              requires_document: false,
              affects_annual_balance: true,
            })),
        });
        const cats = await api.get('/expense-categories', keyOf(me));
        assert.equal(cats.status, 200, cats.body);
        assert.deepEqual(cats.json, {
          data: categories
            .filter((c) => c.companyId === me && c.active)
            .map((c) => ({
              id: c.id,
              name: c.name,
              description: null,
              requires_receipt: true,
              max_amount: 5000,
            })),
        });
      });

      it(`serves company ${label}'s own records by id`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        await checkOwnRecords(api, keyOf(me), me, EMPLOYEES);
        await checkOwnRecords(api, keyOf(me), me, LEAVES_RESOURCE);
        await checkOwnRecords(api, keyOf(me), me, EXPENSES_RESOURCE);
      });

      it(`answers company ${label}'s own receipts: a redirect, or receipt_not_found`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        for (const x of expenses.filter(ownedBy(me))) {
          const res = await api.get(`/expenses/${x.id}/receipt`, keyOf(me));
          if (x.hasReceipt) {
            assert.equal(res.status, 302, `expense ${x.id}: ${res.body}`);
            assert.match(String(res.headers.location), /^https?:\/\//);
          } else {
            assert.equal(res.status, 404, `expense ${x.id}: ${res.body}`);
            assert.equal(res.json.code, 'receipt_not_found');
          }
        }
      });

      it(`GET /changes follows only company ${label}'s records; the other's cursors reveal nothing`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        const other = me === A ? B : A;
        const feed = async (key: string, query: string) => {
          const res = await api.get(`/changes?${query}`, key);
          assert.equal(res.status, 200, res.body);
          return res.json as { data: { id: number; resource: string; cursor: string }[] };
        };
        const mine = await feed(keyOf(me), 'limit=1000');
        const expected = [
          ...employees.filter(ownedBy(me)).map((r) => `employee ${r.id}`),
          ...leaveTypes.filter(ownedBy(me)).map((r) => `leave_type ${r.id}`),
          ...leaves.filter(ownedBy(me)).map((r) => `leave ${r.id}`),
          ...categories.filter(ownedBy(me)).map((r) => `expense_category ${r.id}`),
          ...expenses.filter(ownedBy(me)).map((r) => `expense ${r.id}`),
        ];
        assert.deepEqual(mine.data.map((e) => `${e.resource} ${e.id}`).sort(), expected.sort());
        // Every position of the other company's feed, used with this company's key: refused,
        // naming after, with nothing of either company.
        const theirs = await feed(keyOf(other), 'limit=1000');
        for (const { cursor } of theirs.data) {
          const res = await api.get(`/changes?after=${cursor}&limit=1000`, keyOf(me));
          assert.equal(res.status, 422, res.body);
          assert.deepEqual(
            res.json.errors.map((e: { parameter: string }) => e.parameter),
            ['after'],
          );
          assert.equal(res.json.data, undefined);
        }
      });

      it(`answers every record of the other company as if no company had it`, async (t) => {
        const { api, keyOf } = await useTwoCompanies(t, dialect);
        await checkForeignIdsAreMissing(api, keyOf(me), me);
      });
    });
  }

  describe("company B's state", () => {
    it("deactivating company B changes nothing for A's key", async (t) => {
      const { api, keyOf } = await useTwoCompanies(t, dialect);
      assert.equal((await api.get('/me', keyOf(B))).status, 200);
      const before = [];
      for (const path of A_VIEW) before.push(await api.get(path, keyOf(A)));

      await setCompanyActive(api.handle.db, B, false);
      await eventually(
        async () => (await api.get('/me', keyOf(B))).status === 403,
        "B's key is refused",
      );
      const refused = await api.get('/employees', keyOf(B));
      assert.equal(refused.status, 403);
      assert.equal(refused.json.code, 'company_inactive');

      const me = await api.get('/me', keyOf(A));
      assert.equal(me.status, 200, me.body);
      assert.equal(me.json.company.id, A);
      for (const [i, path] of A_VIEW.entries()) {
        const res = await api.get(path, keyOf(A));
        assert.equal(res.status, before[i]?.status, path);
        assert.equal(res.body, before[i]?.body, path);
      }
      await checkForeignIdsAreMissing(api, keyOf(A), A);
    });

    it("revoking B's key changes nothing for A's key", async (t) => {
      const { api, keyOf } = await useTwoCompanies(t, dialect);
      assert.equal((await api.get('/me', keyOf(B))).status, 200);
      const before = [];
      for (const path of A_VIEW) before.push(await api.get(path, keyOf(A)));

      const [bKey] = await listApiKeys(api.handle.db, B);
      await revokeApiKey(api.handle.db, bKey?.id as number);
      await eventually(
        async () => (await api.get('/me', keyOf(B))).status === 401,
        "B's key is refused",
      );
      const refused = await api.get('/leaves', keyOf(B));
      assert.equal(refused.status, 401);
      assert.equal(refused.json.code, 'unauthenticated');

      const me = await api.get('/me', keyOf(A));
      assert.equal(me.status, 200, me.body);
      assert.equal(me.json.company.id, A);
      for (const [i, path] of A_VIEW.entries()) {
        const res = await api.get(path, keyOf(A));
        assert.equal(res.status, before[i]?.status, path);
        assert.equal(res.body, before[i]?.body, path);
      }
    });
  });
});
