import type { Db } from '../db/database.ts';
import { listEmployees } from '../db/employees.queries.ts';
import type { ExpenseFilters, ExpenseSortField } from '../db/expense-lists.ts';
import { listExpenses, type ReceiptUrls } from '../db/expenses.queries.ts';
import type { LeaveFilters, LeaveSortField } from '../db/leave-lists.ts';
import { listLeaves } from '../db/leaves.queries.ts';
import type { ListSource, PageRequest, SortOrder } from '../db/list-source.ts';
import { EXPENSE_STATUSES, LEAVE_STATUSES } from '../domain.ts';
import { EMPLOYEE_SORT_FIELDS } from '../schemas/employees.ts';
import { EXPENSE_SORT_FIELDS } from '../schemas/expenses.ts';
import { LEAVE_SORT_FIELDS } from '../schemas/leaves.ts';
import { DAY_MS, formatTimestamp } from '../time.ts';
import { type ApiDeps, listSourceOf } from './deps.ts';

/** At most this many of the longest companies' lists are read before the service listens. */
const WARMED_COMPANIES = 4;

/** And at most this many of the companies whose keys were used in the last day. */
const CALLED_COMPANIES = 32;

/**
 * The active companies whose lists are long enough to have samples (`list_sample_sets`), the
 * most records first, at most `most` of them.
 */
async function longestListCompanies(db: Db, most: number): Promise<number[]> {
  const sets = await db
    .selectFrom('list_sample_sets as s')
    .innerJoin('companies as c', 'c.id', 's.company_id')
    .select(['s.company_id', 's.totals'])
    .where('c.active', '=', 1)
    .execute();
  const records = new Map<number, number>();
  for (const set of sets) {
    const totals: number[] = JSON.parse(set.totals);
    const sum = totals.reduce((all, rows) => all + rows, 0);
    records.set(set.company_id, (records.get(set.company_id) ?? 0) + sum);
  }
  return [...records]
    .sort(([a, rowsOfA], [b, rowsOfB]) => rowsOfB - rowsOfA || a - b)
    .slice(0, most)
    .map(([companyId]) => companyId);
}

/**
 * The active companies whose unrevoked keys were used since `since` (`api_keys.last_used_at`,
 * written at most once a minute a key), the last used first, at most `most` of them: the
 * companies whose integrators call this deployment, whom a restart (a deploy) would otherwise
 * make wait while their first lists load what every later one shares.
 */
async function lastCalledCompanies(db: Db, since: string, most: number): Promise<number[]> {
  const rows = await db
    .selectFrom('api_keys as k')
    .innerJoin('companies as c', 'c.id', 'k.company_id')
    .select('k.company_id')
    .select((eb) => eb.fn.max('k.last_used_at').as('last_used_at'))
    .where('c.active', '=', 1)
    .where('k.revoked_at', 'is', null)
    .where('k.last_used_at', '>=', since)
    .groupBy('k.company_id')
    .orderBy('last_used_at', 'desc')
    .orderBy('k.company_id')
    .limit(most)
    .execute();
  return rows.map((row) => row.company_id);
}

/** What `warmLists` read: the companies, the filtered pages, the employees held once it had. */
export interface WarmedLists {
  companies: number[];
  filteredPages: number;
  employees: number;
}

/** The warm-up reads one record a page and builds no answer: no receipt URL is wanted. */
const NO_RECEIPT_URLS: ReceiptUrls = { receiptUrl: () => '' };

/**
 * Reads the first record of the longest companies' leaves, expenses and roster in every order,
 * as their first requests would, and waits for the employees their pages embed. A company's
 * first list page after a restart loads what every later one shares: the list's samples
 * (each sort column's), and in the background all its employees (`EmployeeDirectories`: 20
 * statements for the bench company's 20,000, which took the pool's connections and the event
 * loop from the requests beside them). The first eight requests of the cold mix, sent at
 * once to a new process, took 448–546 ms on PostgreSQL, 306–362 ms after this
 * (docs/performance.md, item 101). Then the longest company's lists once with each kind of
 * filter (`readFilteredPages`). The same first records, and the roster's, of the companies
 * whose keys were used in the last day (`lastCalledCompanies`): a small company's first list
 * after a restart sent about ten statements where its later ones send two or three, and its
 * first requests were a phase's slowest (docs/performance.md, item 107). Returns the companies
 * read, the filtered pages, and how many employees the copies hold then.
 */
export async function warmLists(deps: ApiDeps): Promise<WarmedLists> {
  const longest = await longestListCompanies(deps.db, WARMED_COMPANIES);
  const since = formatTimestamp(new Date(Date.now() - DAY_MS));
  const called = await lastCalledCompanies(deps.db, since, CALLED_COMPANIES);
  const companies = [...new Set([...longest, ...called])];
  let filteredPages = 0;
  for (const companyId of companies) {
    const version = await deps.dataVersions.of(companyId);
    const source = listSourceOf(deps, async () => version);
    // Every order counts the same rows: the lists' lengths, for the filtered pages' middles.
    const totals = { leaves: 0, expenses: 0 };
    for (const field of LEAVE_SORT_FIELDS) {
      const sort = { field, direction: 'asc' } as const;
      totals.leaves = (await listLeaves(source, companyId, {}, sort, FIRST_RECORD)).meta.total;
    }
    for (const field of EXPENSE_SORT_FIELDS) {
      const sort = { field, direction: 'asc' } as const;
      const page = await listExpenses(source, companyId, {}, sort, FIRST_RECORD, NO_RECEIPT_URLS);
      totals.expenses = page.meta.total;
    }
    for (const field of EMPLOYEE_SORT_FIELDS) {
      await listEmployees(source, companyId, {}, { field, direction: 'asc' }, FIRST_RECORD);
    }
    if (companyId === longest[0]) {
      filteredPages = await readFilteredPages(source, companyId, totals);
    }
  }
  await deps.listCaches.employees.settled();
  return { companies, filteredPages, employees: deps.listCaches.employees.heldEmployees() };
}

const FIRST_RECORD = { page: 1, perPage: 1 };

/**
 * Values of the company's own data to filter its lists by: its first employee (id, and the
 * first letters of the name as a search), its first leave type and expense category, its leave
 * changed last (the first four weeks of the month it starts a window, a week before its change
 * an `updated_since`: narrow, as an integrator's sync asks, so the warm-up stays short), and
 * the first letters of the title of its expense changed last. Null when the company has no
 * employee, leave or expense.
 */
async function filterValues(db: Db, companyId: number) {
  const [employee, leaveType, category, leave, expense] = await Promise.all([
    db
      .selectFrom('employees')
      .select(['id', 'name_folded'])
      .where('company_id', '=', companyId)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('leave_types')
      .select('id')
      .where('company_id', '=', companyId)
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('expense_categories')
      .select('id')
      .where('company_id', '=', companyId)
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('leaves')
      .select(['start_date', 'updated_at'])
      .where('company_id', '=', companyId)
      .orderBy('updated_at', 'desc')
      .limit(1)
      .executeTakeFirst(),
    // By the feed's index, which only the company's rows lead: PostgreSQL reads `order by id
    // desc` down the primary key, past every later company's expenses (0.4 s for the first
    // company of the bench data, its data not yet in memory).
    db
      .selectFrom('expenses')
      .select('title_folded')
      .where('company_id', '=', companyId)
      .orderBy('change_seq', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  if (!employee || !leave || !expense) return null;
  const month = leave.start_date.slice(0, 7);
  const changedMs = Date.parse(leave.updated_at);
  return {
    employeeIds: [employee.id],
    leaveTypeIds: leaveType ? [leaveType.id] : undefined,
    categoryIds: category ? [category.id] : undefined,
    window: { from: `${month}-01`, to: `${month}-28` },
    // Not before the first instant the API takes (a change in the first week of year 1).
    updatedSince: formatTimestamp(new Date(Math.max(changedMs - 7 * DAY_MS, FIRST_STORED_MS))),
    /** A term of three letters and one of one: the trigram index, and the short searches. */
    names: searchTerms(employee.name_folded),
    titles: searchTerms(expense.title_folded),
  };
}

const FIRST_STORED_MS = Date.parse('0001-01-01T00:00:00Z');

/** A blank text searches nothing (the API reads `search=` as no search), as here. */
const searchTerms = (folded: string): [string | undefined, string | undefined] => {
  const letters = [...(folded.trim().split(/\s+/)[0] ?? '')];
  return [letters.slice(0, 3).join('') || undefined, letters.slice(0, 1).join('') || undefined];
};

/** The filters both record lists take (`recordListFilters`). */
interface RecordListFilters<Status extends string> {
  status?: Status[];
  employeeIds?: number[];
  from?: string;
  to?: string;
  search?: string;
  updatedSince?: string;
}

/** The filters every record list takes, each kind alone or with a window or `updated_since`. */
function filterKinds<Status extends string, Field extends string>(
  values: NonNullable<Awaited<ReturnType<typeof filterValues>>>,
  statuses: readonly Status[],
  [term, letter]: [string | undefined, string | undefined],
  [dated, other]: [Field, Field],
): Array<[RecordListFilters<Status>, SortOrder<Field | 'id' | 'created_at'>]> {
  const { employeeIds, window, updatedSince } = values;
  const asc = (field: Field | 'id' | 'created_at') => ({ field, direction: 'asc' }) as const;
  const desc = (field: Field) => ({ field, direction: 'desc' }) as const;
  const [first, second, third] = statuses as [Status, Status, Status];
  return [
    [{ status: [second] }, asc('id')],
    [{ status: [first, third] }, desc(other)],
    [{ employeeIds }, asc('id')],
    [window, asc('id')],
    [{ ...window, status: [second] }, desc(dated)],
    [{ updatedSince }, asc('id')],
    [{ updatedSince }, asc('created_at')],
    [{ search: term }, asc('id')],
    [{ search: letter }, asc('id')],
    [{ search: term, ...window }, asc('id')],
    [{ search: letter, updatedSince }, asc('id')],
  ];
}

/**
 * One record list's first record with each kind of filter (`filterKinds`), with its group
 * filter (a leave type, a category), and its middle record by id and in `other`'s order.
 * Returns the pages read.
 */
async function readEachFilter<Filters extends object, Field extends string>(
  list: (
    filters: Partial<Filters>,
    sort: SortOrder<Field | 'id'>,
    page: PageRequest,
  ) => Promise<unknown>,
  kinds: Array<[Filters, SortOrder<Field | 'id'>]>,
  group: Filters,
  other: Field,
  total: number,
): Promise<number> {
  const middle = { page: Math.max(1, Math.ceil(total / 2)), perPage: 1 };
  for (const [filters, sort] of kinds) await list(filters, sort, FIRST_RECORD);
  await list(group, BY_ID, FIRST_RECORD);
  await list({}, BY_ID, middle);
  await list({}, { field: other, direction: 'asc' }, middle);
  return kinds.length + 3;
}

const BY_ID = { field: 'id', direction: 'asc' } as const;

/**
 * The first record of the company's leaves, expenses and roster with each kind of filter: a
 * status or two, a leave type or category, an employee, a window, `updated_since`, searches of
 * three letters and of one (alone and within a window or `updated_since`), and the middle page
 * of each list in its default order and in another (`totals`: the lists' lengths). Each kind
 * runs statements of its own (the counts by window and by search, the walks along other
 * indexes), which a new process plans and compiles and a new PostgreSQL connection loads the
 * statistics of for the first time: the cold mix's slowest requests were those of the first two
 * seconds after a start, in every class (docs/performance.md, item 103). The leaves and the
 * expenses are read at once, so both of the connections the warm-up opened
 * (`warmConnections`) do it. Returns the pages read.
 */
async function readFilteredPages(
  source: ListSource,
  companyId: number,
  totals: { leaves: number; expenses: number },
): Promise<number> {
  const values = await filterValues(source.db, companyId);
  if (!values) return 0;
  const leaves = readEachFilter<LeaveFilters, LeaveSortField>(
    (filters, sort, page) => listLeaves(source, companyId, filters, sort, page),
    filterKinds(values, LEAVE_STATUSES, values.names, ['end_date', 'start_date']),
    { leaveTypeIds: values.leaveTypeIds },
    'start_date',
    totals.leaves,
  );
  const expenses = readEachFilter<ExpenseFilters, ExpenseSortField>(
    (filters, sort, page) => listExpenses(source, companyId, filters, sort, page, NO_RECEIPT_URLS),
    filterKinds(values, EXPENSE_STATUSES, values.titles, ['expense_date', 'amount']),
    { categoryIds: values.categoryIds },
    'amount',
    totals.expenses,
  ).then(async (pages) => {
    const byHireDate = { field: 'hire_date', direction: 'asc' } as const;
    const [name, letter] = values.names;
    const roster = [{ status: ['active' as const] }, { search: name }, { search: letter }];
    for (const filters of roster) {
      await listEmployees(source, companyId, filters, byHireDate, FIRST_RECORD);
    }
    return pages + roster.length;
  });
  const [leavePages, expensePages] = await Promise.all([leaves, expenses]);
  return leavePages + expensePages;
}
