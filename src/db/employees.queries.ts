import type { EmployeeStatus } from '../domain.ts';
import type { EMPLOYEE_SORT_FIELDS, Employee } from '../schemas/employees.ts';
import { companyVersion } from './companies.queries.ts';
import type { Db } from './database.ts';
import { cachedCount } from './derived-cache.ts';
import { type ListSource, offsetOf, type PageRequest, type SortOrder } from './list-source.ts';
import { type Page, pageOf, rowsOf } from './pagination.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';
import { matchesSearch, type SearchedTable } from './search.ts';
import { VERSION_COLUMN } from './statement-ledger.ts';
import { walkedPage } from './walked-pages.ts';

export interface EmployeeFilters {
  status?: EmployeeStatus[];
  search?: string;
  updatedSince?: string;
}

type SortField = (typeof EMPLOYEE_SORT_FIELDS)[number];
// Text sorts use the folded form search uses, so SQLite and PostgreSQL order alike.
const SORT_COLUMNS: Record<
  SortField,
  'id' | 'name_folded' | 'number_folded' | 'hire_date' | 'updated_at'
> = {
  id: 'id',
  full_name: 'name_folded',
  employee_number: 'number_folded',
  hire_date: 'hire_date',
  updated_at: 'updated_at',
};

const COLUMNS = [
  'id',
  'employee_number',
  'full_name',
  'email',
  'department',
  'position',
  'status',
  'hire_date',
  'updated_at',
] as const;

const toEmployee = (row: Employee): Employee => row;

/** Search looks in the folded name and personnel number. */
export const EMPLOYEE_SEARCH: SearchedTable = {
  table: 'employees',
  id: 'employees.id',
  columns: ['employees.name_folded', 'employees.number_folded'],
};

function filtered(db: Db, companyId: number, filters: EmployeeFilters) {
  let query = db.selectFrom('employees').where('company_id', '=', companyId);
  if (filters.status) query = query.where('status', 'in', filters.status);
  if (filters.updatedSince) query = query.where('updated_at', '>=', filters.updatedSince);
  const { search } = filters;
  if (search) query = query.where(matchesSearch(db, EMPLOYEE_SEARCH, search));
  return query;
}

export async function listEmployees(
  source: ListSource,
  companyId: number,
  filters: EmployeeFilters,
  sort: SortOrder<SortField>,
  page: PageRequest,
): Promise<Page<Employee>> {
  const base = filtered(source.db, companyId, filters);
  const total = await cachedCount(source.derived, companyId, await source.version(), base);
  if (offsetOf(page) >= total) return pageOf([], total, page);
  // The page's ids first, walked along the sort column's index (which carries the status) from
  // the nearer end and the nearest anchor, then their rows: an offset over the rows themselves
  // read every skipped employee's row (30–100 ms deep in a roster of 20,000 on PostgreSQL), and
  // an offset over the index from the start passed up to the whole roster.
  const order = { column: SORT_COLUMNS[sort.field], id: 'id', direction: sort.direction };
  const ids = await walkedPage(source, companyId, base, order, page, total, async () => null);
  const rows = await rowsOf(ids, (among) =>
    pageEmployeesAmong(source.db, { companyId, ids: among }),
  );
  return pageOf(
    rows.map(({ [VERSION_COLUMN]: _version, ...employee }) => toEmployee(employee)),
    total,
    page,
  );
}

/** The company's employees among `ids`, with the columns the API serves. */
const servedAmong = (db: Db, companyId: number, ids: readonly number[]) =>
  db
    .selectFrom('employees')
    .select(COLUMNS)
    .where('company_id', '=', companyId)
    .where(oneOfIds(db, 'id', ids));

const employeesAmong = preparedQuery((db, values: { companyId: number; ids: readonly number[] }) =>
  servedAmong(db, values.companyId, values.ids),
);

/** A page's employees among `ids`, with the company's data version (see `companyVersion`). */
const pageEmployeesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    servedAmong(db, values.companyId, values.ids).select(companyVersion(db, values.companyId)),
);

const employeeById = preparedQuery((db, values: { companyId: number; id: number }) =>
  db
    .selectFrom('employees')
    .select(COLUMNS)
    .where('company_id', '=', values.companyId)
    .where('id', '=', values.id),
);

/** The company's employees among `ids`, as the API serves each (the change feed's). */
export async function findEmployees(db: Db, companyId: number, ids: number[]): Promise<Employee[]> {
  if (ids.length === 0) return [];
  const rows = await employeesAmong(db, { companyId, ids });
  return rows.map(toEmployee);
}

export async function findEmployee(
  db: Db,
  companyId: number,
  id: number,
): Promise<Employee | null> {
  const [row] = await employeeById(db, { companyId, id });
  return row ? toEmployee(row) : null;
}
