import type {
  Db,
  NewCompany,
  NewEmployee,
  NewExpense,
  NewExpenseCategory,
  NewLeave,
  NewLeaveType,
  NewReceipt,
} from '../db/database.ts';
import type { ItemInput } from './records.ts';
import type { RowWriter } from './row-writer.ts';

/** Rows waiting to be written, keyed by id (a later line with the same id wins). */
export interface PendingRows {
  companies: Map<number, { line: number; row: NewCompany }>;
  employees: Map<number, { line: number; row: NewEmployee }>;
  leave_types: Map<number, { line: number; row: NewLeaveType }>;
  expense_categories: Map<number, { line: number; row: NewExpenseCategory }>;
  leaves: Map<number, { line: number; row: NewLeave; attachments: string[] }>;
  expenses: Map<
    number,
    { line: number; row: NewExpense; items: ItemInput[]; receipt: NewReceipt | null }
  >;
}

export interface WriteOutcome {
  /** A record whose id is already stored for another company; nothing more was written. */
  conflict: { line: number; label: string; id: number; ownerCompanyId: number } | null;
  /** Receipt files that rows used before this batch replaced them. */
  replacedReceiptKeys: string[];
}

type TenantTable = 'employees' | 'leave_types' | 'expense_categories' | 'leaves' | 'expenses';
const LABELS: Record<TenantTable, string> = {
  employees: 'employee',
  leave_types: 'leave_type',
  expense_categories: 'expense_category',
  leaves: 'leave',
  expenses: 'expense',
};

/**
 * Looks up which pending ids are already stored. Returns the first one stored under another
 * company as a conflict, or else the stored ids: only those can have children to replace.
 */
async function storedIds<T extends { line: number; row: { company_id: number } }>(
  writer: RowWriter,
  table: TenantTable,
  pending: Map<number, T>,
): Promise<{ conflict: WriteOutcome['conflict']; stored: number[] }> {
  if (pending.size === 0) return { conflict: null, stored: [] };
  const found: number[] = [];
  for (const { id, company_id } of await writer.owners(table, [...pending.keys()])) {
    const entry = pending.get(id);
    if (entry && entry.row.company_id !== company_id) {
      const conflict = { line: entry.line, label: LABELS[table], id, ownerCompanyId: company_id };
      return { conflict, stored: [] };
    }
    found.push(id);
  }
  return { conflict: null, stored: found };
}

/**
 * Groups stored parent ids by company, so that deleting their children can use the child
 * tables' indexes, which are all led by company_id.
 */
function byCompany<T extends { row: { company_id: number } }>(
  pending: Map<number, T>,
  ids: number[],
): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (const id of ids) {
    const companyId = (pending.get(id) as T).row.company_id;
    const group = groups.get(companyId);
    if (group) group.push(id);
    else groups.set(companyId, [id]);
  }
  return groups;
}

/**
 * Writes pending rows parents first, so every composite foreign key (company_id, parent_id)
 * finds its parent. Children (attachments, items, receipt rows) of a replaced record are
 * replaced with it.
 */
export async function writeBatches(
  db: Db,
  writer: RowWriter,
  pending: PendingRows,
): Promise<WriteOutcome> {
  const tenantTables = [
    'employees',
    'leave_types',
    'expense_categories',
    'leaves',
    'expenses',
  ] as const;
  const stored = {} as Record<TenantTable, number[]>;
  for (const table of tenantTables) {
    const found = await storedIds(
      writer,
      table,
      pending[table] as Map<number, { line: number; row: { company_id: number } }>,
    );
    if (found.conflict) return { conflict: found.conflict, replacedReceiptKeys: [] };
    stored[table] = found.stored;
  }

  const rows = <T extends { row: object }>(map: Map<number, T>) =>
    [...map.values()].map((e) => e.row);
  await writer.write('companies', rows(pending.companies), 'upsert');
  await writer.write('employees', rows(pending.employees), 'upsert');
  await writer.write('leave_types', rows(pending.leave_types), 'upsert');
  await writer.write('expense_categories', rows(pending.expense_categories), 'upsert');

  await writer.write('leaves', rows(pending.leaves), 'upsert');
  // Only records that were stored before can have children to replace; a first import of a
  // file deletes nothing.
  for (const [companyId, leaveIds] of byCompany(pending.leaves, stored.leaves)) {
    await db
      .deleteFrom('leave_attachments')
      .where('company_id', '=', companyId)
      .where('leave_id', 'in', leaveIds)
      .execute();
  }
  const attachments = [...pending.leaves.values()].flatMap(({ row, attachments }) =>
    attachments.map((file_name) => ({ company_id: row.company_id, leave_id: row.id, file_name })),
  );
  await writer.write('leave_attachments', attachments, 'insert');

  await writer.write('expenses', rows(pending.expenses), 'upsert');
  const replacedReceiptKeys: string[] = [];
  for (const [companyId, expenseIds] of byCompany(pending.expenses, stored.expenses)) {
    await db
      .deleteFrom('expense_items')
      .where('company_id', '=', companyId)
      .where('expense_id', 'in', expenseIds)
      .execute();
    const previous = await db
      .selectFrom('receipts')
      .select(['expense_id', 'original_key', 'processed_key'])
      .where('expense_id', 'in', expenseIds)
      .execute();
    for (const { expense_id, original_key, processed_key } of previous) {
      const next = pending.expenses.get(expense_id)?.receipt;
      if (next?.original_key !== original_key) replacedReceiptKeys.push(original_key);
      if (next?.processed_key !== processed_key) replacedReceiptKeys.push(processed_key);
    }
    await db.deleteFrom('receipts').where('expense_id', 'in', expenseIds).execute();
  }
  const items = [...pending.expenses.values()].flatMap(({ row, items }) =>
    items.map((item) => ({ company_id: row.company_id, expense_id: row.id, ...item })),
  );
  await writer.write('expense_items', items, 'insert');
  const receipts = [...pending.expenses.values()].flatMap(({ receipt }) =>
    receipt ? [receipt] : [],
  );
  await writer.write('receipts', receipts, 'insert');

  return { conflict: null, replacedReceiptKeys };
}
