import { type Kysely, sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
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
import { EMPLOYEE_SORT_FIELDS } from '../../src/schemas/employees.ts';
import { EXPENSE_SORT_FIELDS } from '../../src/schemas/expenses.ts';
import { LEAVE_SORT_FIELDS } from '../../src/schemas/leaves.ts';
import type { CompanyData, IdPool } from '../soak/catalog.ts';
import { type MixCompany, makeCall } from '../soak/mix.ts';

/**
 * The cold mix: thousands of distinct URLs, the way a fleet of integrators pages through the
 * data, so a response cache or a cached total of one URL cannot answer them. Each request
 * belongs to a class, reported on its own: deep pages in every sort order, status
 * combinations, date windows, employee lists, `updated_since`, searches of 3–6 and of 1–2
 * characters, look-ups by id, the large company's roster, small companies' lists and the
 * reference lists; and searches of 1–6 characters within a window or `updated_since` (drawn
 * apart, see `DATED_SEARCH_SHARE`). Pages are drawn uniformly over each list's real last page
 * (a sync reads every page), so totals are counted from the data while the mix is made.
 */
export const MIX_WEIGHTS = {
  'deep-page': 12,
  status: 12,
  window: 14,
  'employee-list': 8,
  'updated-since': 10,
  search: 8,
  'short-search': 3,
  'by-id': 15,
  employees: 6,
  'small-company': 8,
  reference: 4,
} as const;

/**
 * Searches within a window or `updated_since` came later (2026-12-03): they are drawn with a
 * random stream of their own, one after about this share of the other requests, so every
 * other request of a seed's mix stays what it was in the runs before them.
 */
const DATED_SEARCH_SHARE = 0.05;

/**
 * A dated search of 3–6 characters is `dated-search`, one of 1–2 `dated-short-search`: the
 * issue's targets differ (100 and 300 ms), as for the searches without dates. The class is
 * told by the term drawn (a word shorter than the length drawn is taken whole), so the split
 * changes no request of a seed's mix.
 */
export type MixClass = keyof typeof MIX_WEIGHTS | 'dated-search' | 'dated-short-search';
export const MIX_CLASSES: readonly MixClass[] = [
  ...(Object.keys(MIX_WEIGHTS) as MixClass[]),
  'dated-search',
  'dated-short-search',
];

export interface MixRequest {
  class: MixClass;
  companyId: number;
  /** Under the API base, query string included. */
  path: string;
  gzip: boolean;
}

const PAGE_SIZES = [25, 50, 100] as const;
const GZIP_SHARE = 0.5;

type ListName = 'leaves' | 'expenses';

interface ListFilter {
  status?: readonly string[];
  employeeIds?: number[];
  groupIds?: number[];
  from?: string;
  to?: string;
  updatedSince?: string;
}

const LISTS = {
  leaves: {
    statuses: LEAVE_STATUSES,
    sortFields: LEAVE_SORT_FIELDS,
    group: 'leave_type_id',
    groupIds: (data: CompanyData) => data.leaveTypeIds,
  },
  expenses: {
    statuses: EXPENSE_STATUSES,
    sortFields: EXPENSE_SORT_FIELDS,
    group: 'category_id',
    groupIds: (data: CompanyData) => data.categoryIds,
  },
} as const;

/** Counts the rows of the large company's list a filter keeps, for its real last page. */
class Totals {
  private readonly known = new Map<string, number>();

  private readonly db: Db;
  private readonly companyId: number;

  constructor(db: Db, companyId: number) {
    this.db = db;
    this.companyId = companyId;
  }

  async of(list: ListName | 'employees', filter: ListFilter): Promise<number> {
    const key = `${list}:${JSON.stringify(filter)}`;
    const cached = this.known.get(key);
    if (cached !== undefined) return cached;
    // biome-ignore lint/suspicious/noExplicitAny: the three tables share the filtered columns.
    let q = (this.db as unknown as Kysely<any>)
      .selectFrom(list)
      .select(sql<number>`count(*)`.as('n'))
      .where('company_id', '=', this.companyId);
    if (filter.status) q = q.where('status', 'in', filter.status);
    if (filter.employeeIds) q = q.where('employee_id', 'in', filter.employeeIds);
    if (filter.groupIds) q = q.where(LISTS[list as ListName].group, 'in', filter.groupIds);
    const [first, last] =
      list === 'leaves' ? ['start_date', 'end_date'] : ['expense_date', 'expense_date'];
    if (filter.to) q = q.where(first, '<=', filter.to);
    if (filter.from) q = q.where(last, '>=', filter.from);
    if (filter.updatedSince) q = q.where('updated_at', '>=', filter.updatedSince);
    const row = (await q.executeTakeFirstOrThrow()) as { n: number | string };
    this.known.set(key, Number(row.n));
    return Number(row.n);
  }
}

function drawId(rng: Rng, pool: IdPool): number {
  return 'ids' in pool ? pick(rng, pool.ids) : int(rng, pool.min, pool.max);
}

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A calendar month, quarter or year within the data's years. */
function period(rng: Rng, data: CompanyData): { from: string; to: string } {
  const months = pick(rng, [1, 3, 12]);
  const year = int(rng, Number(data.firstDate.slice(0, 4)), Number(data.lastDate.slice(0, 4)));
  const firstMonth = months * int(rng, 0, 12 / months - 1);
  return {
    from: isoDate(Date.UTC(year, firstMonth, 1)),
    to: isoDate(Date.UTC(year, firstMonth + months, 0)),
  };
}

const sortParam = (rng: Rng, fields: readonly string[]) =>
  `${chance(rng, 0.5) ? '-' : ''}${pick(rng, fields)}`;

/** per_page, and a page drawn uniformly from the first to the real last one. */
function paging(rng: Rng, query: URLSearchParams, total: number, lastAllowed = Infinity): void {
  const perPage = pick(rng, PAGE_SIZES);
  query.set('per_page', String(perPage));
  const last = Math.max(1, Math.min(lastAllowed, Math.ceil(total / perPage)));
  const page = int(rng, 1, last);
  if (page > 1) query.set('page', String(page));
}

function withQuery(path: string, query: URLSearchParams): string {
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

function filterQuery(list: ListName, filter: ListFilter, sort?: string): URLSearchParams {
  const query = new URLSearchParams();
  if (filter.status) query.set('status', filter.status.join(','));
  if (filter.employeeIds) query.set('employee_id', filter.employeeIds.join(','));
  if (filter.groupIds) query.set(LISTS[list].group, filter.groupIds.join(','));
  if (filter.from) query.set('from', filter.from);
  if (filter.to) query.set('to', filter.to);
  if (filter.updatedSince) query.set('updated_since', filter.updatedSince);
  if (sort) query.set('sort', sort);
  return query;
}

const someStatuses = (rng: Rng, statuses: readonly string[]) =>
  sample(rng, statuses, int(rng, 1, statuses.length - 1));

/** A substring of `length` characters of a word of `text` (whole word when shorter). */
function piece(rng: Rng, text: string, length: number): string {
  const word = pick(
    rng,
    text.split(/\s+/).filter((w) => w.length > 0),
  );
  const chars = [...word];
  if (chars.length <= length) return word;
  const start = int(rng, 0, chars.length - length);
  return chars.slice(start, start + length).join('');
}

/** From an hour to two years before the latest change, evenly on a log scale. */
function updatedSince(rng: Rng, data: CompanyData): string {
  const lookbackMs = 3_600_000 * (730 * 24) ** rng();
  return new Date(Date.parse(data.lastUpdatedAt) - lookbackMs)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
}

/** A search of `length` characters of a merchant's name (expenses) or a surname (the others). */
function searchQuery(rng: Rng, data: CompanyData, target: string, length: number) {
  const source = target === 'expenses' ? data.merchants : data.surnames;
  return new URLSearchParams({ search: piece(rng, pick(rng, source), length) });
}

/** per_page, and one of the first three pages, as an integrator looking for something reads. */
function searchPage(rng: Rng, query: URLSearchParams): URLSearchParams {
  query.set('per_page', String(pick(rng, PAGE_SIZES)));
  const page = int(rng, 1, 3);
  if (page > 1) query.set('page', String(page));
  return query;
}

interface MixContext {
  rng: Rng;
  large: CompanyData;
  small: MixCompany[];
  totals: Totals;
}

async function listPath(
  context: MixContext,
  list: ListName,
  filter: ListFilter,
  sort: string | undefined,
): Promise<string> {
  const query = filterQuery(list, filter, sort);
  paging(context.rng, query, await context.totals.of(list, filter));
  return withQuery(`/${list}`, query);
}

async function pathOf(
  context: MixContext,
  mixClass: MixClass,
): Promise<{ path: string; companyId: number; class?: MixClass }> {
  const { rng, large } = context;
  const list: ListName = chance(rng, 0.5) ? 'leaves' : 'expenses';
  const spec = LISTS[list];
  const maybeSort = (share: number) =>
    chance(rng, share) ? sortParam(rng, spec.sortFields) : undefined;
  const inLarge = async (path: Promise<string> | string) => ({
    path: await path,
    companyId: large.id,
  });
  switch (mixClass) {
    case 'deep-page':
      return inLarge(listPath(context, list, {}, sortParam(rng, spec.sortFields)));
    case 'status':
      return inLarge(
        listPath(context, list, { status: someStatuses(rng, spec.statuses) }, maybeSort(0.8)),
      );
    case 'window': {
      const filter: ListFilter = period(rng, large);
      if (chance(rng, 0.5)) filter.status = someStatuses(rng, spec.statuses);
      if (chance(rng, 0.25)) filter.groupIds = sample(rng, spec.groupIds(large), int(rng, 1, 2));
      return inLarge(listPath(context, list, filter, maybeSort(0.7)));
    }
    case 'employee-list': {
      const ids = Array.from({ length: int(rng, 1, 5) }, () => drawId(rng, large.employees));
      const filter: ListFilter = { employeeIds: [...new Set(ids)] };
      if (chance(rng, 0.3)) filter.status = someStatuses(rng, spec.statuses);
      return inLarge(listPath(context, list, filter, maybeSort(0.5)));
    }
    case 'updated-since': {
      const filter: ListFilter = { updatedSince: updatedSince(rng, large) };
      if (chance(rng, 0.3)) filter.status = someStatuses(rng, spec.statuses);
      return inLarge(listPath(context, list, filter, maybeSort(0.6)));
    }
    case 'search':
    case 'short-search': {
      const length = mixClass === 'search' ? int(rng, 3, 6) : int(rng, 1, 2);
      const target = pick(rng, ['employees', list] as const);
      const query = searchQuery(rng, large, target, length);
      if (chance(rng, 0.3)) {
        const fields = target === 'employees' ? EMPLOYEE_SORT_FIELDS : spec.sortFields;
        query.set('sort', sortParam(rng, fields));
      }
      return inLarge(withQuery(`/${target}`, searchPage(rng, query)));
    }
    case 'dated-search':
    case 'dated-short-search': {
      const query = searchQuery(rng, large, list, int(rng, 1, 6));
      const short = [...(query.get('search') ?? '')].length <= 2;
      const filter: ListFilter = chance(rng, 0.5)
        ? period(rng, large)
        : { updatedSince: updatedSince(rng, large) };
      if (chance(rng, 0.3)) filter.status = someStatuses(rng, spec.statuses);
      for (const [name, value] of filterQuery(list, filter, maybeSort(0.5))) query.set(name, value);
      const drawn = await inLarge(withQuery(`/${list}`, searchPage(rng, query)));
      return { ...drawn, class: short ? 'dated-short-search' : 'dated-search' };
    }
    case 'by-id': {
      const kind = pick(rng, ['employees', 'leaves', 'expenses'] as const);
      return inLarge(`/${kind}/${drawId(rng, large[kind])}`);
    }
    case 'employees': {
      const query = new URLSearchParams();
      const status = chance(rng, 0.4) ? someStatuses(rng, EMPLOYEE_STATUSES) : undefined;
      if (status) query.set('status', status.join(','));
      if (chance(rng, 0.6)) query.set('sort', sortParam(rng, EMPLOYEE_SORT_FIELDS));
      paging(rng, query, await context.totals.of('employees', status ? { status } : {}));
      return inLarge(withQuery('/employees', query));
    }
    case 'small-company': {
      const company = pick(rng, context.small);
      const kind = pick(rng, ['employees', 'leaves', 'expenses', 'leave', 'expense'] as const);
      return { path: makeCall(rng, kind, company, false).path, companyId: company.data.id };
    }
    case 'reference': {
      const company = chance(rng, 0.5) ? large : pick(rng, context.small).data;
      return { path: pick(rng, ['/leave-types', '/expense-categories']), companyId: company.id };
    }
  }
}

/**
 * `count` requests drawn with `seed` from the classes in proportion to MIX_WEIGHTS; the same
 * data and seed give the same requests in the same order. A URL drawn twice is drawn again, so
 * every request of the mix is distinct.
 */
export async function makeColdMix(
  db: Db,
  large: CompanyData,
  small: CompanyData[],
  count: number,
  seed: number,
): Promise<MixRequest[]> {
  const context: MixContext = {
    rng: mulberry32(seed),
    large,
    small: small.map((data) => ({ data, benchPaths: [] })),
    totals: new Totals(db, large.id),
  };
  const dated: MixContext = { ...context, rng: mulberry32(seed ^ DATED_SEARCH_SEED) };
  const seen = new Set<string>();
  const requests: MixRequest[] = [];
  const add = async (drawn: MixContext, mixClass: MixClass) => {
    const { path, companyId, class: drawnClass = mixClass } = await pathOf(drawn, mixClass);
    const gzip = chance(drawn.rng, GZIP_SHARE);
    const key = `${companyId}:${path}`;
    if (seen.has(key) && mixClass !== 'reference') return;
    seen.add(key);
    requests.push({ class: drawnClass, companyId, path, gzip });
  };
  while (requests.length < count) {
    await add(context, weightedKey(context.rng, MIX_WEIGHTS));
    if (chance(dated.rng, DATED_SEARCH_SHARE)) await add(dated, 'dated-search');
  }
  return requests.slice(0, count);
}

/** What the seed of the dated searches' own stream differs from the mix's seed by. */
const DATED_SEARCH_SEED = 0x5eed_da7e;

/** Heavy first requests after a restart: deep pages and filtered lists of the large company. */
export function firstRequests(mix: MixRequest[], count: number): MixRequest[] {
  const heavy: MixClass[] = ['deep-page', 'status', 'window', 'updated-since', 'search'];
  return mix.filter((request) => heavy.includes(request.class)).slice(0, count);
}
