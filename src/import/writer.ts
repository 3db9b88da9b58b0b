import type { Kysely } from 'kysely';
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

// SQLite accepts at most 32,766 bound values in one statement; stay well below it.
const MAX_VALUES_PER_STATEMENT = 30_000;

type TenantTable = 'employees' | 'leave_types' | 'expense_categories' | 'leaves' | 'expenses';
const LABELS: Record<TenantTable, string> = {
  employees: 'employee',
  leave_types: 'leave_type',
  expense_categories: 'expense_category',
  leaves: 'leave',
  expenses: 'expense',
};

// Bulk upserts are generic over the table; Kysely's per-table types cannot follow that.
// biome-ignore lint/suspicious/noExplicitAny: see above.
type LooseDb = Kysely<any>;

async function insertChunked(
  db: Db,
  table: string,
  rows: object[],
  upsert: boolean,
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0] as object);
  const perStatement = Math.max(1, Math.floor(MAX_VALUES_PER_STATEMENT / columns.length));
  const updated = columns.filter((c) => c !== 'id');
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const insert = (db as LooseDb).insertInto(table).values(chunk);
    if (upsert) {
      await insert
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet((eb) =>
              Object.fromEntries(updated.map((c) => [c, eb.ref(`excluded.${c}`)])),
            ),
        )
        .execute();
    } else {
      await insert.execute();
    }
  }
}

/**
 * Looks up which pending ids are already stored. Returns the first one stored under another
 * company as a conflict, or else the stored ids: only those can have children to replace.
 */
async function storedIds<T extends { line: number; row: { company_id: number } }>(
  db: Db,
  table: TenantTable,
  pending: Map<number, T>,
): Promise<{ conflict: WriteOutcome['conflict']; stored: number[] }> {
  const ids = [...pending.keys()];
  const found: number[] = [];
  for (let start = 0; start < ids.length; start += MAX_VALUES_PER_STATEMENT) {
    const stored = await db
      .selectFrom(table)
      .select(['id', 'company_id'])
      .where('id', 'in', ids.slice(start, start + MAX_VALUES_PER_STATEMENT))
      .execute();
    for (const { id, company_id } of stored) {
      const entry = pending.get(id);
      if (entry && entry.row.company_id !== company_id) {
        const conflict = { line: entry.line, label: LABELS[table], id, ownerCompanyId: company_id };
        return { conflict, stored: [] };
      }
      found.push(id);
    }
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
export async function writeBatches(db: Db, pending: PendingRows): Promise<WriteOutcome> {
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
      db,
      table,
      pending[table] as Map<number, { line: number; row: { company_id: number } }>,
    );
    if (found.conflict) return { conflict: found.conflict, replacedReceiptKeys: [] };
    stored[table] = found.stored;
  }

  const rows = <T extends { row: object }>(map: Map<number, T>) =>
    [...map.values()].map((e) => e.row);
  await insertChunked(db, 'companies', rows(pending.companies), true);
  await insertChunked(db, 'employees', rows(pending.employees), true);
  await insertChunked(db, 'leave_types', rows(pending.leave_types), true);
  await insertChunked(db, 'expense_categories', rows(pending.expense_categories), true);

  await insertChunked(db, 'leaves', rows(pending.leaves), true);
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
  await insertChunked(db, 'leave_attachments', attachments, false);

  await insertChunked(db, 'expenses', rows(pending.expenses), true);
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
  await insertChunked(db, 'expense_items', items, false);
  const receipts = [...pending.expenses.values()].flatMap(({ receipt }) =>
    receipt ? [receipt] : [],
  );
  await insertChunked(db, 'receipts', receipts, false);

  return { conflict: null, replacedReceiptKeys };
}
