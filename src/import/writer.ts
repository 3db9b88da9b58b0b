import type { Db } from '../db/database.ts';
import {
  COMPANY,
  PARENT_TYPES,
  type RecordType,
  type RecordTypeOf,
  type TenantRecordType,
  WRITE_ORDER,
} from '../resources/index.ts';
import type { ChangeLog } from './change-log.ts';
import {
  continuePurged,
  embeddedValues,
  forgetDeletions,
  stampRows,
  updatedOf,
  writeOwnTimes,
} from './change-tracking.ts';
import { deleteChildren, dropReceipts, receiptKeysOf, withoutParents } from './record-children.ts';
import type { RowWriter } from './row-writer.ts';
import { type Batch, columnValues, type RecordRows, type TableRows } from './rows.ts';

/**
 * A batch's records written inside the import's transaction: upserted parents first, each
 * checked against the ids other companies own, their children replaced where they changed.
 * Delete lines are `deleter.ts`'s.
 */

export interface WriteOutcome {
  /** A record whose id is already stored for another company; nothing more was written. */
  conflict: { line: number; label: string; id: number; ownerCompanyId: number } | null;
  /** A line the batch cannot apply (a deletion of a record others still name); nothing written. */
  refused: { line: number; field: string; problem: string } | null;
  /** Receipt files that rows used before this batch replaced or deleted them. */
  replacedReceiptKeys: string[];
  /** Delete lines of the batch whose id the company did not have (no change). */
  absentDeletes: number;
}

/** The outcome of a batch that a conflict or a refused line stopped before it wrote anything. */
export const nothingWritten = (
  fault: Pick<WriteOutcome, 'conflict'> | Pick<WriteOutcome, 'refused'>,
) => ({
  conflict: null,
  refused: null,
  replacedReceiptKeys: [],
  absentDeletes: 0,
  ...fault,
});

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

/**
 * Writes a batch parents first (WRITE_ORDER), so every composite foreign key (company_id,
 * parent_id) finds its parent. Children (attachments, items, receipt rows) of a replaced record
 * are replaced with it.
 */
export async function writeBatch(
  db: Db,
  writer: RowWriter,
  log: ChangeLog,
  batch: Batch,
): Promise<WriteOutcome> {
  const owners = new Map<RecordTypeOf, Owned>();
  const stored = new Map<RecordTypeOf, number[]>();
  const companies = new Set<number>();
  for (const descriptor of TENANT_TYPES) {
    const rows = owned(batch[descriptor.table] as RecordRows);
    const found = await storedIds(writer, descriptor, rows);
    if (found.conflict) return nothingWritten({ conflict: found.conflict });
    owners.set(descriptor, rows);
    stored.set(descriptor, found.stored);
    for (const companyId of rows.companyOf.values()) companies.add(companyId);
  }
  const companyRows = batch[COMPANY.table] as TableRows;
  if ((await writer.write(COMPANY.table, companyRows, 'upsert')) > 0) {
    const companyIds = columnValues<number>(companyRows, 'id');
    log.companyRowsChanged(companyIds);
    await continuePurged(db, companyIds);
  }
  // After the companies: a company may be new in this batch.
  await log.seqsOf([...companies].sort((a, b) => a - b));

  const replacedReceiptKeys: string[] = [];
  for (const descriptor of TENANT_TYPES) {
    const rows = batch[descriptor.table] as TableRows;
    const ownTimes = stampRows(descriptor, batch, log);
    const tenant = descriptor as TenantRecordType;
    const own = owners.get(descriptor) as Owned;
    const storedParents = PARENT_TYPES.has(descriptor.type as RecordType)
      ? byCompany(own, stored.get(descriptor) ?? [])
      : new Map<number, number[]>();
    const embeddedBefore = new Map<number, string>();
    for (const [companyId, ids] of storedParents) {
      for (const [id, values] of await embeddedValues(db, tenant, companyId, ids)) {
        embeddedBefore.set(id, values);
      }
    }
    const changed =
      (await writer.write(descriptor.table, rows, 'upsert')) +
      (ownTimes.size > 0
        ? await writeOwnTimes(db, log, ownTimes, byCompany(own, [...ownTimes.keys()]))
        : 0);
    if (changed > 0) log.mayHaveChanged(own.companyOf.values());
    await forgetDeletions(db, log, tenant, byCompany(own, [...own.companyOf.keys()]));
    if (changed > 0) {
      for (const [companyId, ids] of storedParents) {
        const updated = await updatedOf(db, tenant, companyId, ids, log.seqOf(companyId));
        const after = await embeddedValues(db, tenant, companyId, updated);
        log.parentsUpdated(
          companyId,
          descriptor.type as RecordType,
          updated.filter((id) => after.get(id) !== embeddedBefore.get(id)),
        );
      }
    }
    if (descriptor.children.length === 0 && !descriptor.receipt) continue;
    // Only records that were stored before can have children to replace (a first import of a
    // file deletes nothing), and only those whose row the upsert changed: a row holds the
    // digest of its children, so one the file repeats exactly has the same children stored,
    // which stay as they are (a nightly re-import rewrites no item or attachment).
    const groups = byCompany(own, stored.get(descriptor) ?? []);
    const unchanged = new Set<number>();
    const incoming =
      descriptor.receipt && groups.size > 0 ? receiptKeysOf(batch.receipts as TableRows) : null;
    for (const [companyId, ids] of groups) {
      const updated = new Set(
        changed > 0 ? await updatedOf(db, tenant, companyId, ids, log.seqOf(companyId)) : [],
      );
      const replaced = ids.filter((id) => updated.has(id));
      for (const id of ids) if (!updated.has(id)) unchanged.add(id);
      if (replaced.length === 0) continue;
      await deleteChildren(db, descriptor, companyId, replaced);
      if (incoming) replacedReceiptKeys.push(...(await dropReceipts(db, replaced, incoming)));
    }
    for (const { table, parentColumn } of descriptor.children) {
      await writer.write(table, withoutParents(batch[table], parentColumn, unchanged), 'insert');
    }
    if (descriptor.receipt) {
      await writer.write(
        'receipts',
        withoutParents(batch.receipts, 'expense_id', unchanged),
        'insert',
      );
    }
  }
  return { conflict: null, refused: null, replacedReceiptKeys, absentDeletes: 0 };
}
