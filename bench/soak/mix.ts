import {
  chance,
  int,
  mulberry32,
  pick,
  type Rng,
  sample,
  weightedKey,
} from '../../src/demo/random.ts';
import { EMPLOYEE_STATUSES, EXPENSE_STATUSES, LEAVE_STATUSES } from '../../src/domain.ts';
import { DEFAULT_PER_PAGE } from '../../src/schemas/common.ts';
import { EMPLOYEE_SORT_FIELDS } from '../../src/schemas/employees.ts';
import { EXPENSE_SORT_FIELDS } from '../../src/schemas/expenses.ts';
import { LEAVE_SORT_FIELDS } from '../../src/schemas/leaves.ts';
import type { CompanyData, IdPool } from './catalog.ts';

/**
 * The calls an integrator makes, in proportion (weights out of 100 for a company that has
 * every kind): syncs page through the three lists with filters, look records up by id, read
 * the reference lists, and fetch receipts. `bench-url` repeats the bench's fixed URLs (a
 * dashboard refreshing), which the response cache answers.
 */
export const CALL_WEIGHTS = {
  me: 4,
  'leave-types': 3,
  'expense-categories': 3,
  employees: 10,
  employee: 8,
  leaves: 18,
  leave: 10,
  expenses: 18,
  expense: 12,
  'receipt-link': 3,
  'receipt-download': 3,
  'bench-url': 8,
} as const;

export type CallKind = keyof typeof CALL_WEIGHTS;
export const CALL_KINDS = Object.keys(CALL_WEIGHTS) as CallKind[];

/** Share of calls made with the large company's key; the small companies share the rest. */
const LARGE_COMPANY_SHARE = 0.5;
/** Share of calls that ask for a gzip answer, as most HTTP libraries do by default. */
const GZIP_SHARE = 0.5;
const PAGE_SIZES = [25, 50, 100] as const;
/**
 * Filtered lists are read from their first pages: an integrator pages through a filtered result
 * from the start. Only unfiltered lists get pages anywhere (deep pages of the large company's
 * million rows), so page anchors are built for a few sort orders, not for every random filter.
 */
const FILTERED_LAST_PAGE = 10;

export interface SoakCall {
  kind: CallKind;
  companyId: number;
  /** Under the API base, query string included. */
  path: string;
  /** 200, or 302 for a receipt link; a receipt download follows the 302 and expects 200. */
  expectedStatus: 200 | 302;
  gzip: boolean;
}

export interface MixCompany {
  data: CompanyData;
  /** The bench scenarios' paths this company's key may send (empty for most companies). */
  benchPaths: string[][];
}

function drawId(rng: Rng, pool: IdPool): number {
  return 'ids' in pool ? pick(rng, pool.ids) : int(rng, pool.min, pool.max);
}

/** `yyyy-mm-dd` of a UTC calendar day; day 0 is the last day of the month before. */
function isoDate(year: number, monthIndex: number, day: number): string {
  return new Date(Date.UTC(year, monthIndex, day)).toISOString().slice(0, 10);
}

/**
 * A calendar month, quarter or year within the company's years, as payroll and accounting ask
 * for them: the same periods come back, as they do from integrators.
 */
function period(rng: Rng, data: CompanyData): { from: string; to: string } {
  const months = pick(rng, [1, 1, 1, 3, 3, 12]);
  const year = int(rng, Number(data.firstDate.slice(0, 4)), Number(data.lastDate.slice(0, 4)));
  const firstMonth = months * int(rng, 0, 12 / months - 1);
  return { from: isoDate(year, firstMonth, 1), to: isoDate(year, firstMonth + months, 0) };
}

function sortParam(rng: Rng, fields: readonly string[]): string {
  return `${chance(rng, 0.5) ? '-' : ''}${pick(rng, fields)}`;
}

function someOf(rng: Rng, values: readonly (string | number)[], most: number): string {
  return sample(rng, values, int(rng, 1, Math.min(most, values.length))).join(',');
}

/** per_page and page: anywhere in an unfiltered list, among the first pages of a filtered one. */
function paging(rng: Rng, query: URLSearchParams, rows: number): void {
  const filtered = [...query.keys()].some((name) => name !== 'sort');
  const perPage = chance(rng, 0.3) ? undefined : pick(rng, PAGE_SIZES);
  if (perPage !== undefined) query.set('per_page', String(perPage));
  const size = perPage ?? DEFAULT_PER_PAGE;
  const lastPage = filtered ? FILTERED_LAST_PAGE : Math.max(1, Math.ceil(rows / size));
  // Half the time the first pages, where most reads land; otherwise anywhere.
  const page = chance(rng, 0.5) ? int(rng, 1, Math.min(3, lastPage)) : int(rng, 1, lastPage);
  if (page > 1) query.set('page', String(page));
}

function withQuery(path: string, query: URLSearchParams): string {
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

function employeesPath(rng: Rng, data: CompanyData): string {
  const query = new URLSearchParams();
  if (chance(rng, 0.4)) query.set('status', someOf(rng, EMPLOYEE_STATUSES, 2));
  if (chance(rng, 0.2)) {
    const surname = pick(rng, data.surnames);
    query.set('search', surname.slice(0, int(rng, 3, Math.max(3, surname.length))));
  }
  if (chance(rng, 0.4)) query.set('sort', sortParam(rng, EMPLOYEE_SORT_FIELDS));
  paging(rng, query, data.employeeCount);
  return withQuery('/employees', query);
}

/** Up to this many days before the company's latest change: what an incremental sync asks. */
const SYNC_LOOKBACK_DAYS = 30;

/** What differs between the leaves and the expenses lists. */
interface RecordList {
  path: '/leaves' | '/expenses';
  statuses: readonly string[];
  sortFields: readonly string[];
  rows: (data: CompanyData) => number;
  searchTerm: (rng: Rng, data: CompanyData) => string;
  /** A filter asked only with a period (leave type, category), as a report for a period does. */
  periodFilter: { name: string; share: number; ids: (data: CompanyData) => number[]; most: number };
}

const LEAVES: RecordList = {
  path: '/leaves',
  statuses: LEAVE_STATUSES,
  sortFields: LEAVE_SORT_FIELDS,
  rows: (data) => data.leaveCount,
  searchTerm: (rng, data) => pick(rng, data.surnames),
  periodFilter: { name: 'leave_type_id', share: 0.25, ids: (data) => data.leaveTypeIds, most: 2 },
};

const EXPENSES: RecordList = {
  path: '/expenses',
  statuses: EXPENSE_STATUSES,
  sortFields: EXPENSE_SORT_FIELDS,
  rows: (data) => data.expenseCount,
  searchTerm: (rng, data) => pick(rng, data.merchants).slice(0, int(rng, 3, 6)),
  periodFilter: { name: 'category_id', share: 0.3, ids: (data) => data.categoryIds, most: 3 },
};

/**
 * A list of leaves or expenses filtered as payroll and accounting syncs do: mostly a month or
 * a quarter, often with statuses; now and then an employee's records, a search, or what
 * changed since the last sync.
 */
function recordsPath(rng: Rng, data: CompanyData, list: RecordList): string {
  const query = new URLSearchParams();
  if (chance(rng, 0.4)) query.set('status', someOf(rng, list.statuses, 2));
  if (chance(rng, 0.1)) {
    const ids = Array.from({ length: int(rng, 1, 3) }, () => drawId(rng, data.employees));
    query.set('employee_id', [...new Set(ids)].join(','));
  }
  if (chance(rng, 0.6)) {
    const { from, to } = period(rng, data);
    query.set('from', from);
    query.set('to', to);
    const { name, share, ids, most } = list.periodFilter;
    if (chance(rng, share)) query.set(name, someOf(rng, ids(data), most));
  }
  if (chance(rng, 0.1)) query.set('search', list.searchTerm(rng, data));
  if (chance(rng, 0.1)) {
    const lookback = int(rng, 1, SYNC_LOOKBACK_DAYS) * 86_400_000;
    const lastSync = new Date(Date.parse(data.lastUpdatedAt) - lookback);
    query.set('updated_since', lastSync.toISOString().replace(/\.\d+Z$/, 'Z'));
  }
  if (chance(rng, 0.3)) query.set('sort', sortParam(rng, list.sortFields));
  paging(rng, query, list.rows(data));
  return withQuery(list.path, query);
}

function receiptPath(rng: Rng, data: CompanyData): string {
  const variant = pick(rng, ['processed', 'processed', 'original', null]);
  const path = `/expenses/${pick(rng, data.receiptExpenseIds)}/receipt`;
  return variant === null ? path : `${path}?variant=${variant}`;
}

/** The path of one call of `kind` for the company; the caller checks the kind applies. */
function pathFor(rng: Rng, kind: CallKind, company: MixCompany): string {
  const { data } = company;
  switch (kind) {
    case 'me':
      return '/me';
    case 'leave-types':
      return '/leave-types';
    case 'expense-categories':
      return '/expense-categories';
    case 'employees':
      return employeesPath(rng, data);
    case 'employee':
      return `/employees/${drawId(rng, data.employees)}`;
    case 'leaves':
      return recordsPath(rng, data, LEAVES);
    case 'leave':
      return `/leaves/${drawId(rng, data.leaves)}`;
    case 'expenses':
      return recordsPath(rng, data, EXPENSES);
    case 'expense':
      return `/expenses/${drawId(rng, data.expenses)}`;
    case 'receipt-link':
    case 'receipt-download':
      return receiptPath(rng, data);
    case 'bench-url':
      return pick(rng, pick(rng, company.benchPaths));
  }
}

/** One call of `kind` (which must apply to the company: see `kindsFor`). */
export function makeCall(rng: Rng, kind: CallKind, company: MixCompany, gzip: boolean): SoakCall {
  return {
    kind,
    companyId: company.data.id,
    path: pathFor(rng, kind, company),
    expectedStatus: kind === 'receipt-link' || kind === 'receipt-download' ? 302 : 200,
    gzip,
  };
}

/** The kinds of call that make sense for the company, with their weights. */
export function kindsFor(company: MixCompany): Partial<Record<CallKind, number>> {
  const kinds: Partial<Record<CallKind, number>> = { ...CALL_WEIGHTS };
  if (company.data.receiptExpenseIds.length === 0) {
    delete kinds['receipt-link'];
    delete kinds['receipt-download'];
  }
  if (company.benchPaths.length === 0) delete kinds['bench-url'];
  return kinds;
}

/**
 * An endless, seeded sequence of calls: the same companies, seed and data give the same calls
 * in the same order, so runs are comparable.
 */
export function createMix(
  companies: MixCompany[],
  largeCompanyId: number,
  seed: number,
): () => SoakCall {
  const rng = mulberry32(seed);
  const large = companies.find((company) => company.data.id === largeCompanyId);
  const small = companies.filter((company) => company !== large);
  const kinds = new Map(companies.map((company) => [company, kindsFor(company)]));
  return () => {
    const useLarge =
      large !== undefined && (small.length === 0 || chance(rng, LARGE_COMPANY_SHARE));
    const company = useLarge ? large : pick(rng, small);
    const kind = weightedKey(rng, kinds.get(company) as Record<CallKind, number>);
    return makeCall(rng, kind, company, chance(rng, GZIP_SHARE));
  };
}
