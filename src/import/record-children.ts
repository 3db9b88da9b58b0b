import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { RecordTypeOf } from '../resources/index.ts';
import { columnValues, type TableRows } from './rows.ts';

/**
 * The rows records bring along (attachments, items, receipt rows): deleted with a replaced or
 * deleted record, and left out of a batch's inserts where their record is unchanged.
 */

/** Each incoming receipt's files, by expense. */
export function receiptKeysOf(
  receipts: TableRows,
): Map<number, [original: string, processed: string]> {
  const keys = new Map<number, [original: string, processed: string]>();
  const originals = columnValues<string>(receipts, 'original_key');
  const processed = columnValues<string>(receipts, 'processed_key');
  columnValues<number>(receipts, 'expense_id').forEach((id, i) => {
    keys.set(id, [originals[i] as string, processed[i] as string]);
  });
  return keys;
}

/** Deletes the receipt rows of stored expenses; returns the files no incoming row keeps. */
export async function dropReceipts(
  db: Db,
  expenseIds: number[],
  incoming: Map<number, [original: string, processed: string]>,
): Promise<string[]> {
  const replaced: string[] = [];
  const previous = await db
    .selectFrom('receipts')
    .select(['expense_id', 'original_key', 'processed_key'])
    .where('expense_id', 'in', expenseIds)
    .execute();
  for (const { expense_id, original_key, processed_key } of previous) {
    const next = incoming.get(expense_id);
    if (next?.[0] !== original_key) replaced.push(original_key);
    if (next?.[1] !== processed_key) replaced.push(processed_key);
  }
  await db.deleteFrom('receipts').where('expense_id', 'in', expenseIds).execute();
  return replaced;
}

/** The rows of `rows` whose parent (`parentColumn`) is not one of `parents`. */
export function withoutParents(
  rows: TableRows | undefined,
  parentColumn: string,
  parents: ReadonlySet<number>,
): TableRows {
  const all = rows as TableRows;
  if (parents.size === 0) return all;
  const width = all.columns.length;
  const parentAt = all.columns.indexOf(parentColumn);
  const values: unknown[] = [];
  for (let row = 0; row < all.values.length; row += width) {
    if (parents.has(all.values[row + parentAt] as number)) continue;
    for (let i = row; i < row + width; i++) values.push(all.values[i]);
  }
  return { columns: all.columns, values };
}

/** Deletes the rows records bring along (attachments, items), through the children's indexes. */
export async function deleteChildren(
  db: Db,
  descriptor: RecordTypeOf,
  companyId: number,
  ids: number[],
): Promise<void> {
  for (const { table, parentColumn } of descriptor.children) {
    await db
      .deleteFrom(table)
      .where('company_id', '=', companyId)
      .where(sql.ref(parentColumn), 'in', ids)
      .execute();
  }
}
