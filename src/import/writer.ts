import type { Db } from '../db/database.ts';
import type { RowWriter } from './row-writer.ts';

/**
 * One table's rows, flattened row after row: `values` holds `columns.length` values a row.
 * Flat arrays of plain values are what a batch is made of because they cross to the SQLite
 * writer thread at a third of the cost of row objects, and bind to statements as they are.
 */
export interface TableRows {
  columns: readonly string[];
  values: unknown[];
}

/** The rows of records from the file (not their children): each row's line goes with it. */
export interface RecordRows extends TableRows {
  lines: number[];
}

/** The rows of one batch of records, every table's in the order they are written. */
export interface Batch {
  companies: TableRows;
  employees: RecordRows;
  leave_types: RecordRows;
  expense_categories: RecordRows;
  leaves: RecordRows;
  leave_attachments: TableRows;
  expenses: RecordRows;
  expense_items: TableRows;
  receipts: TableRows;
}

export interface WriteOutcome {
  /** A record whose id is already stored for another company; nothing more was written. */
  conflict: { line: number; label: string; id: number; ownerCompanyId: number } | null;
  /** Receipt files that rows used before this batch replaced them. */
  replacedReceiptKeys: string[];
}

export const rowCount = (rows: TableRows): number =>
  rows.columns.length === 0 ? 0 : rows.values.length / rows.columns.length;

/** The values of one column, row by row. */
export function columnValues<T>(rows: TableRows, column: string): T[] {
  const width = rows.columns.length;
  const at = rows.columns.indexOf(column);
  if (at < 0) return [];
  const values: T[] = [];
  for (let i = at; i < rows.values.length; i += width) values.push(rows.values[i] as T);
  return values;
}

type TenantTable = 'employees' | 'leave_types' | 'expense_categories' | 'leaves' | 'expenses';
const LABELS: Record<TenantTable, string> = {
  employees: 'employee',
  leave_types: 'leave_type',
  expense_categories: 'expense_category',
  leaves: 'leave',
  expenses: 'expense',
};

/** A table's rows by id: each id's company and line. */
interface Owned {
  companyOf: Map<number, number>;
  lineOf: Map<number, number>;
}

function owned(rows: RecordRows): Owned {
  const ids = columnValues<number>(rows, 'id');
  const companies = columnValues<number>(rows, 'company_id');
  const companyOf = new Map<number, number>();
  const lineOf = new Map<number, number>();
  ids.forEach((id, i) => {
    companyOf.set(id, companies[i] as number);
    lineOf.set(id, rows.lines[i] as number);
  });
  return { companyOf, lineOf };
}

/**
 * Looks up which ids of the batch are already stored. Returns the first one stored under
 * another company as a conflict, or else the stored ids: only those can have children to
 * replace.
 */
async function storedIds(
  writer: RowWriter,
  table: TenantTable,
  rows: Owned,
): Promise<{ conflict: WriteOutcome['conflict']; stored: number[] }> {
  if (rows.companyOf.size === 0) return { conflict: null, stored: [] };
  const found: number[] = [];
  for (const { id, company_id } of await writer.owners(table, [...rows.companyOf.keys()])) {
    if (rows.companyOf.get(id) !== company_id) {
      const line = rows.lineOf.get(id) as number;
      const conflict = { line, label: LABELS[table], id, ownerCompanyId: company_id };
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
function byCompany(rows: Owned, ids: number[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (const id of ids) {
    const companyId = rows.companyOf.get(id) as number;
    const group = groups.get(companyId);
    if (group) group.push(id);
    else groups.set(companyId, [id]);
  }
  return groups;
}

/**
 * Writes a batch parents first, so every composite foreign key (company_id, parent_id) finds
 * its parent. Children (attachments, items, receipt rows) of a replaced record are replaced
 * with it.
 */
export async function writeBatch(db: Db, writer: RowWriter, batch: Batch): Promise<WriteOutcome> {
  const tenantTables = [
    'employees',
    'leave_types',
    'expense_categories',
    'leaves',
    'expenses',
  ] as const;
  const owners = {} as Record<TenantTable, Owned>;
  const stored = {} as Record<TenantTable, number[]>;
  for (const table of tenantTables) {
    owners[table] = owned(batch[table]);
    const found = await storedIds(writer, table, owners[table]);
    if (found.conflict) return { conflict: found.conflict, replacedReceiptKeys: [] };
    stored[table] = found.stored;
  }

  await writer.write('companies', batch.companies, 'upsert');
  await writer.write('employees', batch.employees, 'upsert');
  await writer.write('leave_types', batch.leave_types, 'upsert');
  await writer.write('expense_categories', batch.expense_categories, 'upsert');

  await writer.write('leaves', batch.leaves, 'upsert');
  // Only records that were stored before can have children to replace; a first import of a
  // file deletes nothing.
  for (const [companyId, leaveIds] of byCompany(owners.leaves, stored.leaves)) {
    await db
      .deleteFrom('leave_attachments')
      .where('company_id', '=', companyId)
      .where('leave_id', 'in', leaveIds)
      .execute();
  }
  await writer.write('leave_attachments', batch.leave_attachments, 'insert');

  await writer.write('expenses', batch.expenses, 'upsert');
  const replacedReceiptKeys: string[] = [];
  const storedExpenses = byCompany(owners.expenses, stored.expenses);
  if (storedExpenses.size > 0) {
    const receiptKeys = new Map<number, [original: string, processed: string]>();
    const originals = columnValues<string>(batch.receipts, 'original_key');
    const processed = columnValues<string>(batch.receipts, 'processed_key');
    columnValues<number>(batch.receipts, 'expense_id').forEach((id, i) => {
      receiptKeys.set(id, [originals[i] as string, processed[i] as string]);
    });
    for (const [companyId, expenseIds] of storedExpenses) {
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
        const next = receiptKeys.get(expense_id);
        if (next?.[0] !== original_key) replacedReceiptKeys.push(original_key);
        if (next?.[1] !== processed_key) replacedReceiptKeys.push(processed_key);
      }
      await db.deleteFrom('receipts').where('expense_id', 'in', expenseIds).execute();
    }
  }
  await writer.write('expense_items', batch.expense_items, 'insert');
  await writer.write('receipts', batch.receipts, 'insert');

  return { conflict: null, replacedReceiptKeys };
}
