import { type ExpressionBuilder, sql } from 'kysely';
import type { LeaveStatus } from '../domain.ts';
import type { LEAVE_SORT_FIELDS, Leave, LeaveDetail, LeaveType } from '../schemas/leaves.ts';
import { DAY_MS } from '../time.ts';
import type { Database, Db } from './database.ts';
import { keyOf } from './derived-cache.ts';
import { type EmbeddedEmployee, embeddedEmployees, employeesById } from './embedded-employees.ts';
import { countLeavesOf } from './leave-counts.ts';
import { longestLeaveDays } from './list-samples-make.ts';
import type { ListOrder, ListSource, PageRequest, SortOrder } from './list-source.ts';
import { type ListQueries, listPage, type Page, pageOf } from './pagination.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';
import { sampledFilterOf, samplesOf } from './sampled-filters.ts';
import {
  isPostgres,
  keptFromSqliteIndexChoice,
  matchesSearch,
  type SearchedTable,
} from './search.ts';

export interface LeaveFilters {
  status?: LeaveStatus[];
  employeeIds?: number[];
  leaveTypeIds?: number[];
  from?: string;
  to?: string;
  search?: string;
  updatedSince?: string;
}

type SortField = (typeof LEAVE_SORT_FIELDS)[number];

/** The company's leaves with their types. */
function typed(db: Db, companyId: number) {
  return db
    .selectFrom('leaves as l')
    .innerJoin('leave_types as t', (join) =>
      join.onRef('t.company_id', '=', 'l.company_id').onRef('t.id', '=', 'l.leave_type_id'),
    )
    .where('l.company_id', '=', companyId);
}

/** The company's leaves with their types, employees and substitutes. */
function joined(db: Db, companyId: number) {
  return typed(db, companyId)
    .innerJoin('employees as e', (join) =>
      join.onRef('e.company_id', '=', 'l.company_id').onRef('e.id', '=', 'l.employee_id'),
    )
    .leftJoin('employees as s', (join) =>
      join
        .onRef('s.company_id', '=', 'l.company_id')
        .onRef('s.id', '=', 'l.substitute_employee_id'),
    );
}

/** A leave search looks in its employee's folded name and personnel number. */
const EMPLOYEES_BY_NAME: SearchedTable = {
  table: 'employees',
  id: 'e.id',
  columns: ['e.name_folded', 'e.number_folded'],
};

/** Derived from the filters before the list query runs (see listLeaves). */
interface Bounds {
  /** Implied by `from` (see windowBounds); lets the start_date index bound the range. */
  earliestStart?: string;
  /** Implied by `to` (see windowBounds); lets the end_date index bound the range. */
  latestEnd?: string;
  /** The employees a search found, when there are few enough to list. */
  searchedEmployeeIds?: number[];
}

/**
 * The company's leaves that match the filters, from the leaves table alone: the page's ids
 * and the count need no join (the foreign keys guarantee the joined rows), and a search by
 * employee reads the employees it found (or, when there are many, a subquery over them).
 */
function filtered(
  db: Db,
  companyId: number,
  filters: LeaveFilters,
  bounds: Bounds = {},
  walkedBy?: string,
) {
  // The walk in `walkedBy`'s order enters its index at its own start (an anchor), not at a
  // filter's bound on the same column: SQLite takes the first bound it finds.
  const date = (column: 'l.start_date' | 'l.end_date' | 'l.updated_at') =>
    column === walkedBy ? keptFromSqliteIndexChoice(db, column) : sql.ref(column);
  // The bounds a window implies (see windowBounds) let a date index read it as a range. A walk
  // in another column's order keeps them out: PostgreSQL, seeing a narrow range on each date
  // (which it counts as independent, as they are not), took a year of leaves for a few
  // thousand and read each link of a chain of anchors in id order through the end_date index,
  // sorting the year's 55,000 rows each time (20–28 ms a link, 36 links for one page), where
  // walking the id index takes 4 ms a link.
  const implied = (column: 'l.start_date' | 'l.end_date') =>
    walkedBy === undefined || walkedBy === column;
  // SQLite tests the terms in the order they are written, on every index entry a walk passes:
  // the ranges first, as they fail most entries, so their statuses are never compared (item 47
  // in docs/performance.md).
  let q = db.selectFrom('leaves as l').where('l.company_id', '=', companyId);
  // A leave matches a date range when its period intersects it (docs/api.md "Ordering, filters and
  // search").
  if (filters.from) q = q.where(date('l.end_date'), '>=', filters.from);
  if (filters.to) q = q.where(date('l.start_date'), '<=', filters.to);
  if (filters.updatedSince) q = q.where(date('l.updated_at'), '>=', filters.updatedSince);
  if (bounds.earliestStart && implied('l.start_date')) {
    q = q.where(date('l.start_date'), '>=', bounds.earliestStart);
  }
  if (bounds.latestEnd && implied('l.end_date')) {
    q = q.where(date('l.end_date'), '<=', bounds.latestEnd);
  }
  if (filters.leaveTypeIds) q = q.where('l.leave_type_id', 'in', filters.leaveTypeIds);
  if (filters.employeeIds) q = q.where('l.employee_id', 'in', filters.employeeIds);
  if (filters.status) q = q.where('l.status', 'in', filters.status);
  if (filters.search) {
    q = q.where('l.employee_id', 'in', foundEmployees(db, companyId, filters.search, bounds));
  }
  return q;
}

/** The company's employees whose name or personnel number contains the search. */
const searchedEmployees = (db: Db, companyId: number, search: string) =>
  db
    .selectFrom('employees as e')
    .select('e.id')
    .where('e.company_id', '=', companyId)
    .where(matchesSearch(db, EMPLOYEES_BY_NAME, search));

/** The employees a search found: the ids it listed when few, else the query that selects them. */
const foundEmployees = (db: Db, companyId: number, search: string, bounds: Bounds) =>
  bounds.searchedEmployeeIds ?? searchedEmployees(db, companyId, search);

/**
 * A search with no other filter than statuses is counted from the leaves the employees it
 * finds have (see `countLeavesOf`): the few it listed, or every one its subquery selects.
 */
function searchedTotal(
  source: ListSource,
  companyId: number,
  filters: LeaveFilters,
  bounds: Bounds,
): ((version: number) => Promise<number>) | undefined {
  const { search, status } = filters;
  const { employeeIds, leaveTypeIds, from, to, updatedSince } = filters;
  if (!search || employeeIds || leaveTypeIds || from || to || updatedSince) return undefined;
  const employees = foundEmployees(source.db, companyId, search, bounds);
  return (version: number) =>
    source.derived.value(companyId, version, keyOf('searched leaves', [search, status]), () =>
      countLeavesOf(source.db, companyId, employees, status),
    );
}

/** Whether the list is limited to employees the request named or its search found. */
const namesEmployees = (filters: LeaveFilters, bounds: Bounds): boolean =>
  Boolean(filters.employeeIds || bounds.searchedEmployeeIds);

const hasAttachments = (eb: ExpressionBuilder<Database & { l: Database['leaves'] }, 'l'>) =>
  eb
    .exists(
      eb
        .selectFrom('leave_attachments as a')
        .select('a.id')
        .whereRef('a.company_id', '=', 'l.company_id')
        .whereRef('a.leave_id', '=', 'l.id'),
    )
    .as('has_attachments');

/** A leave's own columns, as the API serves them. */
const LEAVE_COLUMNS = [
  'l.id',
  'l.status',
  'l.start_date',
  'l.end_date',
  'l.days',
  'l.duration_type',
  'l.start_time',
  'l.end_time',
  'l.hours',
  'l.reason',
  'l.rejection_reason',
  'l.approved_at',
  'l.created_at',
  'l.updated_at',
] as const;

const LEAVE_TYPE_COLUMNS = [
  't.id as leave_type_id',
  't.name as leave_type_name',
  't.type_key',
] as const;

/** A leave's own columns with its type's and its employees' ids, as pages and the feed read it. */
type LeaveRow = Awaited<ReturnType<typeof leavesAmong>>[number];

/** The employees a leave embeds: who is away, and who stands in (if anyone). */
interface LeavePeople {
  employee: EmbeddedEmployee;
  substitute: EmbeddedEmployee | null;
}

function toLeave(row: LeaveRow, people: LeavePeople): Leave {
  return {
    id: row.id,
    status: row.status,
    employee: people.employee,
    leave_type: { id: row.leave_type_id, name: row.leave_type_name, type_key: row.type_key },
    start_date: row.start_date,
    end_date: row.end_date,
    days: row.days,
    duration_type: row.duration_type,
    start_time: row.start_time,
    end_time: row.end_time,
    hours: row.hours,
    reason: row.reason,
    rejection_reason: row.rejection_reason,
    substitute_employee: people.substitute,
    approved_at: row.approved_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Up to this many employees found by a search are listed in the leave query itself. */
const LISTED_EMPLOYEES = 500;

/**
 * The employees a leave search finds, looked up first: a short list lets the database read
 * just their leaves through the employee index (and no employee found means no leave), where
 * a subquery would have it walk every leave of the company. Undefined when there is no
 * search, or more employees than are worth listing (the subquery is used then).
 */
async function employeesFound(
  db: Db,
  companyId: number,
  search: string | undefined,
): Promise<number[] | undefined> {
  if (!search) return undefined;
  const rows = await searchedEmployees(db, companyId, search)
    .limit(LISTED_EMPLOYEES + 1)
    .execute();
  return rows.length > LISTED_EMPLOYEES ? undefined : rows.map((row) => row.id);
}

/** The company's longest leave, in whole days (from its samples when it has them). */
async function longestLeave(source: ListSource, companyId: number): Promise<number> {
  const version = await source.version();
  const samples = await samplesOf(source, companyId, 'leaves', version);
  const dialect = isPostgres(source.db) ? 'postgres' : 'sqlite';
  return (
    samples?.longestLeaveDays ??
    (await source.derived.value(companyId, version, keyOf('longest leave', []), () =>
      longestLeaveDays(source.db, dialect, companyId),
    ))
  );
}

/** The first and last dates a leave can have (years 0001–9999, as the import takes them). */
const FIRST_DATE_MS = Date.parse('0001-01-01T00:00:00Z');
const LAST_DATE_MS = Date.parse('9999-12-31T00:00:00Z');

/**
 * The date `days` after (or before) `date`, kept within the dates a leave can have: a bound
 * past 9999-12-31 would be written `+010000-…`, which sorts before every stored date.
 */
const plusDays = (date: string, days: number) => {
  const ms = Date.parse(`${date}T00:00:00Z`) + days * DAY_MS;
  return new Date(Math.min(Math.max(ms, FIRST_DATE_MS), LAST_DATE_MS)).toISOString().slice(0, 10);
};

/**
 * A leave intersects a range [from, to] only when it ends on or after `from` and starts by
 * `to`, so it starts no earlier than `from` minus the company's longest leave, and ends no
 * later than `to` plus it. Both bounds are exact, and turn "every leave ending after `from`"
 * (years of rows for a recent quarter) into an index range of a few months, in either date's
 * order.
 */
async function windowBounds(
  source: ListSource,
  companyId: number,
  filters: LeaveFilters,
): Promise<{ earliestStart?: string; latestEnd?: string }> {
  if (!filters.from && !filters.to) return {};
  const days = await longestLeave(source, companyId);
  return {
    earliestStart: filters.from ? plusDays(filters.from, -days) : undefined,
    latestEnd: filters.to ? plusDays(filters.to, days) : undefined,
  };
}

export async function listLeaves(
  source: ListSource,
  companyId: number,
  filters: LeaveFilters,
  sort: SortOrder<SortField>,
  page: PageRequest,
): Promise<Page<Leave>> {
  const searchedEmployeeIds = await employeesFound(source.db, companyId, filters.search);
  if (searchedEmployeeIds?.length === 0) return pageOf([], 0, page);
  const { earliestStart, latestEnd } = await windowBounds(source, companyId, filters);
  const bounds = { earliestStart, latestEnd, searchedEmployeeIds };
  const names = namesEmployees(filters, bounds);
  const window = Boolean(filters.from || filters.to);
  const lists: ListQueries = {
    list: 'leaves',
    matching: filtered(source.db, companyId, filters, bounds),
    walking: filtered(source.db, companyId, filters, bounds, `l.${sort.field}`),
    filterIndex: names
      ? 'leaves_employee_id_id'
      : window
        ? 'leaves_start_date_list'
        : filters.updatedSince
          ? 'leaves_updated_at_list'
          : filters.search
            ? null
            : 'leaves_id_list',
    selective: Boolean(names || filters.search || window || filters.updatedSince),
    fewMatches: Boolean(filters.employeeIds),
    boundable: !names && Boolean(window || filters.updatedSince),
    filtersBoundSortColumn: {
      id: false,
      start_date: !names && Boolean(earliestStart || filters.to),
      end_date: !names && Boolean(filters.from || latestEnd),
      created_at: false,
      updated_at: Boolean(filters.updatedSince),
    }[sort.field],
    counted: searchedTotal(source, companyId, filters, bounds),
    // A leave intersects [from, to] when it starts by `to` and does not end before `from`.
    sampled: sampledFilterOf(
      filters,
      filters.leaveTypeIds,
      () =>
        filtered(source.db, companyId, {
          status: filters.status,
          leaveTypeIds: filters.leaveTypeIds,
        }),
      { from: 'end_date', to: 'start_date' },
    ),
  };
  const order: ListOrder = { column: `l.${sort.field}`, id: 'l.id', direction: sort.direction };
  const { rows, total } = await listPage(source, companyId, lists, order, page, (ids) =>
    leavesAmong(source.db, { companyId, ids }),
  );
  const employees = await embeddedEmployees(
    source.db,
    source.employees,
    { companyId, version: await source.version() },
    rows.flatMap((row) => [row.employee_id, row.substitute_employee_id]),
  );
  return pageOf(
    rows.flatMap((row) => {
      const people = peopleOf(row, employees);
      return people ? [toLeave(row, people)] : [];
    }),
    total,
    page,
  );
}

type LeaveDetailRow = LeaveRow & {
  document_deadline: string | null;
  document_obligation_status: LeaveDetail['document']['obligation_status'];
  has_attachments: unknown;
};

const toLeaveDetail = (row: LeaveDetailRow, people: LeavePeople): LeaveDetail => ({
  ...toLeave(row, people),
  document: {
    deadline: row.document_deadline,
    obligation_status: row.document_obligation_status,
    has_attachments: Boolean(row.has_attachments),
  },
});

/** The company's leaves among `ids` with their types, and their employees' ids. */
const typedAmong = (db: Db, companyId: number, ids: readonly number[]) =>
  typed(db, companyId)
    .where(oneOfIds(db, 'l.id', ids))
    .select([...LEAVE_COLUMNS, ...LEAVE_TYPE_COLUMNS, 'l.employee_id', 'l.substitute_employee_id']);

const leavesAmong = preparedQuery((db, values: { companyId: number; ids: readonly number[] }) =>
  typedAmong(db, values.companyId, values.ids),
);

/** One leave with its type, document and employees, joined. */
const leaveById = preparedQuery((db, values: { companyId: number; id: number }) =>
  joined(db, values.companyId)
    .where('l.id', '=', values.id)
    .select([
      ...LEAVE_COLUMNS,
      ...LEAVE_TYPE_COLUMNS,
      'l.employee_id',
      'l.substitute_employee_id',
      'e.employee_number',
      'e.full_name',
      'e.department',
      's.employee_number as substitute_number',
      's.full_name as substitute_name',
      's.department as substitute_department',
      'l.document_deadline',
      'l.document_obligation_status',
    ])
    .select(hasAttachments),
);

const leavesWithEmployeeIds = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    typedAmong(db, values.companyId, values.ids)
      .select(['l.document_deadline', 'l.document_obligation_status'])
      .select(hasAttachments),
);

/**
 * The employees a leave read with their ids embeds, from `employees`; null when one is not
 * there: read after the leave, an employee can be gone (only with its leaves, by an import that
 * committed in between), and the leave is then gone too, as far as this read goes.
 */
function peopleOf(row: LeaveRow, employees: Map<number, EmbeddedEmployee>): LeavePeople | null {
  const employee = employees.get(row.employee_id);
  if (!employee) return null;
  if (row.substitute_employee_id === null) return { employee, substitute: null };
  const substitute = employees.get(row.substitute_employee_id);
  return substitute ? { employee, substitute } : null;
}

export async function findLeave(
  db: Db,
  companyId: number,
  id: number,
): Promise<LeaveDetail | null> {
  const [row] = await leaveById(db, { companyId, id });
  if (!row) return null;
  const employee = {
    id: row.employee_id,
    employee_number: row.employee_number,
    full_name: row.full_name,
    department: row.department,
  };
  const substitute =
    row.substitute_employee_id === null
      ? null
      : {
          id: row.substitute_employee_id,
          employee_number: row.substitute_number as string,
          full_name: row.substitute_name as string,
          department: row.substitute_department as string,
        };
  return toLeaveDetail(row, { employee, substitute });
}

/**
 * The company's leaves among `ids`, each as GET /leaves/{id} serves it (for the change feed):
 * the leaves with their types, then their employees by key (see `employeesById`).
 */
export async function findLeaves(db: Db, companyId: number, ids: number[]): Promise<LeaveDetail[]> {
  if (ids.length === 0) return [];
  const rows = await leavesWithEmployeeIds(db, { companyId, ids });
  const employees = await employeesById(
    db,
    companyId,
    rows.flatMap((row) => [row.employee_id, row.substitute_employee_id]),
  );
  return rows.flatMap((row) => {
    const people = peopleOf(row, employees);
    return people ? [toLeaveDetail(row, people)] : [];
  });
}

const activeLeaveTypesQuery = (db: Db, companyId: number) =>
  db
    .selectFrom('leave_types')
    .select([
      'id',
      'name',
      'type_key',
      'description',
      'max_days_per_year',
      'quota_type',
      'requires_document',
      'affects_annual_balance',
    ])
    .where('company_id', '=', companyId)
    .where('active', '=', 1)
    .orderBy('id');

const activeLeaveTypes = preparedQuery((db, values: { companyId: number }) =>
  activeLeaveTypesQuery(db, values.companyId),
);

const activeLeaveTypesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    activeLeaveTypesQuery(db, values.companyId).where(oneOfIds(db, 'id', values.ids)),
);

/** The company's active leave types, by id; only those among `ids` when given. */
export async function listActiveLeaveTypes(
  db: Db,
  companyId: number,
  ids?: number[],
): Promise<LeaveType[]> {
  if (ids?.length === 0) return [];
  const rows = ids
    ? await activeLeaveTypesAmong(db, { companyId, ids })
    : await activeLeaveTypes(db, { companyId });
  return rows.map((row) => ({
    ...row,
    requires_document: Boolean(row.requires_document),
    affects_annual_balance: Boolean(row.affects_annual_balance),
  }));
}
