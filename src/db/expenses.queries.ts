import { sql } from 'kysely';
import { moneyToNumber } from '../money.ts';
import type { Expense, ExpenseCategory, ExpenseDetail } from '../schemas/expenses.ts';
import { companyVersion } from './companies.queries.ts';
import type { Db } from './database.ts';
import { type EmbeddedEmployee, embeddedEmployees, employeesById } from './embedded-employees.ts';
import {
  EXPENSE_SORT_COLUMNS,
  type ExpenseFilters,
  type ExpenseSortField,
  expenseListQueries,
} from './expense-lists.ts';
import type { ListOrder, ListSource, PageRequest, SortOrder } from './list-source.ts';
import { listPage, type Page, pageOf } from './pagination.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';
import { isPostgres } from './search.ts';

/** URLs of the receipt operation, absolute under the API's base. */
export interface ReceiptUrls {
  receiptUrl(expenseId: number, variant?: 'processed' | 'original'): string;
}

/** The company's expenses with their categories and receipts. */
function categorized(db: Db, companyId: number) {
  return db
    .selectFrom('expenses as x')
    .innerJoin('expense_categories as c', (join) =>
      join.onRef('c.company_id', '=', 'x.company_id').onRef('c.id', '=', 'x.category_id'),
    )
    .leftJoin('receipts as r', (join) =>
      join.onRef('r.company_id', '=', 'x.company_id').onRef('r.expense_id', '=', 'x.id'),
    )
    .where('x.company_id', '=', companyId);
}

/** The company's expenses with their categories, receipts and employees. */
function joined(db: Db, companyId: number) {
  return categorized(db, companyId).innerJoin('employees as e', (join) =>
    join.onRef('e.company_id', '=', 'x.company_id').onRef('e.id', '=', 'x.employee_id'),
  );
}

/** An expense's own columns, as the API serves them. */
const EXPENSE_COLUMNS = [
  'x.id',
  'x.status',
  'x.title',
  'x.description',
  'x.amount_e4',
  'x.currency',
  'x.tax_amount_e4',
  'x.expense_date',
  'x.merchant_name',
  'x.payment_method',
  'x.approved_at',
  'x.paid_at',
  'x.rejected_reason',
  'x.submitted_at',
  'x.created_at',
  'x.updated_at',
  'c.id as category_id',
  'c.name as category_name',
  'r.expense_id as receipt_expense_id',
] as const;

/** An expense's own columns with its category, receipt and employee's id, as pages read it. */
type ExpenseRow = Awaited<ReturnType<typeof expensesAmong>>[number];

function toExpense(row: ExpenseRow, employee: EmbeddedEmployee, urls: ReceiptUrls): Expense {
  const hasReceipt = row.receipt_expense_id !== null;
  return {
    id: row.id,
    status: row.status,
    title: row.title,
    description: row.description,
    amount: moneyToNumber(row.amount_e4),
    currency: row.currency,
    tax_amount: moneyToNumber(row.tax_amount_e4),
    expense_date: row.expense_date,
    merchant_name: row.merchant_name,
    payment_method: row.payment_method,
    category: { id: row.category_id, name: row.category_name },
    employee,
    has_receipt: hasReceipt,
    receipt_url: hasReceipt ? urls.receiptUrl(row.id) : null,
    approved_at: row.approved_at,
    paid_at: row.paid_at,
    rejected_reason: row.rejected_reason,
    submitted_at: row.submitted_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function listExpenses(
  source: ListSource,
  companyId: number,
  filters: ExpenseFilters,
  sort: SortOrder<ExpenseSortField>,
  page: PageRequest,
  urls: ReceiptUrls,
): Promise<Page<Expense>> {
  const lists = await expenseListQueries(source, companyId, filters, sort.field);
  const order: ListOrder = {
    column: EXPENSE_SORT_COLUMNS[sort.field],
    id: 'x.id',
    direction: sort.direction,
  };
  const { rows, total } = await listPage(source, companyId, lists, order, page, (ids) =>
    pageExpensesAmong(source.db, { companyId, ids }),
  );
  const employees = await embeddedEmployees(
    source.db,
    source.employees,
    { companyId, version: await source.version() },
    rows.map((row) => row.employee_id),
  );
  return pageOf(
    rows.flatMap((row) => {
      // Gone since the expense was read: only with its expenses (see `peopleOf` for leaves).
      const employee = employees.get(row.employee_id);
      return employee ? [toExpense(row, employee, urls)] : [];
    }),
    total,
    page,
  );
}

interface ItemRow {
  name: string;
  quantity: number;
  price_e4: number;
}

function toExpenseDetail(
  row: ExpenseRow,
  employee: EmbeddedEmployee,
  items: ItemRow[],
  urls: ReceiptUrls,
): ExpenseDetail {
  const expense = toExpense(row, employee, urls);
  return {
    ...expense,
    items: items.map((item) => ({
      name: item.name,
      quantity: item.quantity,
      price: moneyToNumber(item.price_e4),
    })),
    receipt: expense.has_receipt
      ? {
          url: urls.receiptUrl(row.id),
          processed_url: urls.receiptUrl(row.id, 'processed'),
          original_url: urls.receiptUrl(row.id, 'original'),
        }
      : null,
  };
}

/**
 * An expense's items as one JSON array of `[name, quantity, price_e4]`, in their order: the
 * look-up of one expense reads them in the same statement, one round trip instead of two
 * (docs/performance.md, item 56). PostgreSQL's `json` comes back parsed, SQLite's as text.
 */
function itemsAsJson(db: Db) {
  const array = isPostgres(db)
    ? sql`coalesce(json_agg(json_build_array(i.name, i.quantity, i.price_e4) order by i.position), '[]')`
    : sql`json_group_array(json_array(i.name, i.quantity, i.price_e4) order by i.position)`;
  return sql<ItemsJson>`(select ${array} from expense_items as i
    where i.company_id = x.company_id and i.expense_id = x.id)`;
}

type ItemTuple = [name: string, quantity: number, price_e4: number];
type ItemsJson = ItemTuple[] | string;

/** One expense with its category, receipt, employee and items, joined. */
const expenseById = preparedQuery((db, values: { companyId: number; id: number }) =>
  joined(db, values.companyId)
    .select([
      ...EXPENSE_COLUMNS,
      'x.employee_id',
      'e.employee_number',
      'e.full_name',
      'e.department',
    ])
    .select(itemsAsJson(db).as('items'))
    .where('x.id', '=', values.id),
);

export async function findExpense(
  db: Db,
  companyId: number,
  id: number,
  urls: ReceiptUrls,
): Promise<ExpenseDetail | null> {
  const [row] = await expenseById(db, { companyId, id });
  if (!row) return null;
  const { items, employee_number, full_name, department, ...expense } = row;
  const employee = { id: row.employee_id, employee_number, full_name, department };
  const tuples: ItemTuple[] = typeof items === 'string' ? JSON.parse(items) : items;
  const itemRows = tuples.map(([name, quantity, price_e4]) => ({ name, quantity, price_e4 }));
  return toExpenseDetail(expense, employee, itemRows, urls);
}

/** The company's expenses among `ids` with their categories and receipts, and employees' ids. */
const categorizedAmong = (db: Db, companyId: number, ids: readonly number[]) =>
  categorized(db, companyId)
    .where(oneOfIds(db, 'x.id', ids))
    .select([...EXPENSE_COLUMNS, 'x.employee_id']);

const expensesAmong = preparedQuery((db, values: { companyId: number; ids: readonly number[] }) =>
  categorizedAmong(db, values.companyId, values.ids),
);

/** A page's expenses among `ids`, with the company's data version (see `companyVersion`). */
const pageExpensesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    categorizedAmong(db, values.companyId, values.ids).select(companyVersion(db, values.companyId)),
);

const itemsAmong = preparedQuery((db, values: { companyId: number; ids: readonly number[] }) =>
  db
    .selectFrom('expense_items')
    .select(['expense_id', 'name', 'quantity', 'price_e4'])
    .where('company_id', '=', values.companyId)
    .where(oneOfIds(db, 'expense_id', values.ids))
    .orderBy('expense_id')
    .orderBy('position'),
);

/**
 * The company's expenses among `ids`, each as GET /expenses/{id} serves it (for the change
 * feed): three queries, whatever the number; the employees by key (see `employeesById`).
 */
export async function findExpenses(
  db: Db,
  companyId: number,
  ids: number[],
  urls: ReceiptUrls,
): Promise<ExpenseDetail[]> {
  if (ids.length === 0) return [];
  const rows = await expensesAmong(db, { companyId, ids });
  const employees = await employeesById(
    db,
    companyId,
    rows.map((row) => row.employee_id),
  );
  const items = await itemsAmong(db, { companyId, ids });
  const itemsOf = new Map<number, ItemRow[]>();
  for (const item of items) {
    const list = itemsOf.get(Number(item.expense_id));
    if (list) list.push(item);
    else itemsOf.set(Number(item.expense_id), [item]);
  }
  return rows.flatMap((row) => {
    const employee = employees.get(row.employee_id);
    return employee ? [toExpenseDetail(row, employee, itemsOf.get(row.id) ?? [], urls)] : [];
  });
}

const activeCategoriesQuery = (db: Db, companyId: number) =>
  db
    .selectFrom('expense_categories')
    .select(['id', 'name', 'description', 'requires_receipt', 'max_amount_e4'])
    .where('company_id', '=', companyId)
    .where('active', '=', 1)
    .orderBy('id');

const activeCategories = preparedQuery((db, values: { companyId: number }) =>
  activeCategoriesQuery(db, values.companyId),
);

const activeCategoriesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    activeCategoriesQuery(db, values.companyId).where(oneOfIds(db, 'id', values.ids)),
);

/** The company's active expense categories, by id; only those among `ids` when given. */
export async function listActiveCategories(
  db: Db,
  companyId: number,
  ids?: number[],
): Promise<ExpenseCategory[]> {
  if (ids?.length === 0) return [];
  const rows = ids
    ? await activeCategoriesAmong(db, { companyId, ids })
    : await activeCategories(db, { companyId });
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    requires_receipt: Boolean(row.requires_receipt),
    max_amount: row.max_amount_e4 === null ? null : moneyToNumber(row.max_amount_e4),
  }));
}
