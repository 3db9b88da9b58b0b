import { sql } from 'kysely';
import type { LeaveStatus } from '../domain.ts';
import type { LEAVE_SORT_FIELDS } from '../schemas/leaves.ts';
import { DAY_MS } from '../time.ts';
import type { Db } from './database.ts';
import { keyOf } from './derived-cache.ts';
import { countLeavesOf } from './leave-counts.ts';
import { longestLeaveDays } from './list-samples-make.ts';
import type { ListSource } from './list-source.ts';
import type { ListQueries } from './pagination.ts';
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

export type LeaveSortField = (typeof LEAVE_SORT_FIELDS)[number];

/** A leave search looks in its employee's folded name and personnel number. */
const EMPLOYEES_BY_NAME: SearchedTable = {
  table: 'employees',
  id: 'e.id',
  columns: ['e.name_folded', 'e.number_folded'],
};

/** Derived from the filters before the list query runs (see leaveListQueries). */
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

/**
 * How a filtered list of the company's leaves is read in a sort order: the queries of its
 * filters and what `listPage` weighs to choose among them. Null when a search finds no
 * employee, so no leave matches (see `employeesFound`).
 */
export async function leaveListQueries(
  source: ListSource,
  companyId: number,
  filters: LeaveFilters,
  sortField: LeaveSortField,
): Promise<ListQueries | null> {
  const searchedEmployeeIds = await employeesFound(source.db, companyId, filters.search);
  if (searchedEmployeeIds?.length === 0) return null;
  const { earliestStart, latestEnd } = await windowBounds(source, companyId, filters);
  const bounds = { earliestStart, latestEnd, searchedEmployeeIds };
  const names = namesEmployees(filters, bounds);
  const window = Boolean(filters.from || filters.to);
  return {
    list: 'leaves',
    matching: filtered(source.db, companyId, filters, bounds),
    walking: filtered(source.db, companyId, filters, bounds, `l.${sortField}`),
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
    }[sortField],
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
}
