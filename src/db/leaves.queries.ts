import type { ExpressionBuilder } from 'kysely';
import type { Leave, LeaveDetail, LeaveType } from '../schemas/leaves.ts';
import { companyVersion } from './companies.queries.ts';
import type { Database, Db } from './database.ts';
import { type EmbeddedEmployee, embeddedEmployees, employeesById } from './embedded-employees.ts';
import { type LeaveFilters, type LeaveSortField, leaveListQueries } from './leave-lists.ts';
import type { ListOrder, ListSource, PageRequest, SortOrder } from './list-source.ts';
import { listPage, type Page, pageOf } from './pagination.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';
import type { VERSION_COLUMN } from './statement-ledger.ts';

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
type LeaveRow = Omit<Awaited<ReturnType<typeof leavesAmong>>[number], typeof VERSION_COLUMN>;

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

export async function listLeaves(
  source: ListSource,
  companyId: number,
  filters: LeaveFilters,
  sort: SortOrder<LeaveSortField>,
  page: PageRequest,
): Promise<Page<Leave>> {
  const lists = await leaveListQueries(source, companyId, filters, sort.field);
  if (lists === null) return pageOf([], 0, page);
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

/** A page's leaves among `ids`, with the company's data version (see `companyVersion`). */
const leavesAmong = preparedQuery((db, values: { companyId: number; ids: readonly number[] }) =>
  typedAmong(db, values.companyId, values.ids).select(companyVersion(db, values.companyId)),
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
