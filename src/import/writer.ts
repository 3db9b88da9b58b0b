import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { COMPANY, type RecordTypeOf, WRITE_ORDER } from '../resources/index.ts';
import type { RowWriter } from './row-writer.ts';
import { type Batch, columnValues, type RecordRows, type TableRows } from './rows.ts';

export interface WriteOutcome {
  /** A record whose id is already stored for another company; nothing more was written. */
  conflict: { line: number; label: string; id: number; ownerCompanyId: number } | null;
  /** Receipt files that rows used before this batch replaced them. */
  replacedReceiptKeys: string[];
}

const TENANT_TYPES = WRITE_ORDER.filter((descriptor) => descriptor !== COMPANY);

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
  descriptor: RecordTypeOf,
  rows: Owned,
): Promise<{ conflict: WriteOutcome['conflict']; stored: number[] }> {
  if (rows.companyOf.size === 0) return { conflict: null, stored: [] };
  const found: number[] = [];
  for (const { id, company_id } of await writer.owners(descriptor.table, [
    ...rows.companyOf.keys(),
  ])) {
    if (rows.companyOf.get(id) !== company_id) {
      const line = rows.lineOf.get(id) as number;
      const conflict = { line, label: descriptor.type, id, ownerCompanyId: company_id };
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

/** Each incoming receipt's files, by expense. */
function receiptKeysOf(receipts: TableRows): Map<number, [original: string, processed: string]> {
  const keys = new Map<number, [original: string, processed: string]>();
  const originals = columnValues<string>(receipts, 'original_key');
  const processed = columnValues<string>(receipts, 'processed_key');
  columnValues<number>(receipts, 'expense_id').forEach((id, i) => {
    keys.set(id, [originals[i] as string, processed[i] as string]);
  });
  return keys;
}

/** Deletes the receipt rows of stored expenses; returns the files no incoming row keeps. */
async function dropReceipts(
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

/**
 * Writes a batch parents first (WRITE_ORDER), so every composite foreign key (company_id,
 * parent_id) finds its parent. Children (attachments, items, receipt rows) of a replaced record
 * are replaced with it.
 */
export async function writeBatch(db: Db, writer: RowWriter, batch: Batch): Promise<WriteOutcome> {
  const owners = new Map<RecordTypeOf, Owned>();
  const stored = new Map<RecordTypeOf, number[]>();
  for (const descriptor of TENANT_TYPES) {
    const rows = owned(batch[descriptor.table] as RecordRows);
    const found = await storedIds(writer, descriptor, rows);
    if (found.conflict) return { conflict: found.conflict, replacedReceiptKeys: [] };
    owners.set(descriptor, rows);
    stored.set(descriptor, found.stored);
  }

  const replacedReceiptKeys: string[] = [];
  for (const descriptor of WRITE_ORDER) {
    await writer.write(descriptor.table, batch[descriptor.table] as TableRows, 'upsert');
    if (descriptor.children.length === 0 && !descriptor.receipt) continue;
    // Only records that were stored before can have children to replace; a first import of a
    // file deletes nothing.
    const groups = byCompany(owners.get(descriptor) as Owned, stored.get(descriptor) ?? []);
    const incoming =
      descriptor.receipt && groups.size > 0 ? receiptKeysOf(batch.receipts as TableRows) : null;
    for (const [companyId, ids] of groups) {
      for (const { table, parentColumn } of descriptor.children) {
        await db
          .deleteFrom(table)
          .where('company_id', '=', companyId)
          .where(sql.ref(parentColumn), 'in', ids)
          .execute();
      }
      if (incoming) replacedReceiptKeys.push(...(await dropReceipts(db, ids, incoming)));
    }
    for (const { table } of descriptor.children) {
      await writer.write(table, batch[table] as TableRows, 'insert');
    }
    if (descriptor.receipt) {
      await writer.write('receipts', batch.receipts as TableRows, 'insert');
    }
  }
  return { conflict: null, replacedReceiptKeys };
}
