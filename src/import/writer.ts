import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import type { Db } from '../db/database.ts';
import {
  COMPANY,
  DEPENDENTS,
  PARENT_TYPES,
  type RecordType,
  type RecordTypeOf,
  recordTypeNamed,
  TENANT_RECORD_TYPES,
  type TenantRecordType,
  WRITE_ORDER,
} from '../resources/index.ts';
import { type ChangeLog, feedRank } from './change-log.ts';
import type { RowWriter } from './row-writer.ts';
import {
  type Batch,
  childrenDigests,
  columnValues,
  type DeleteBatch,
  type RecordRows,
  type TableRows,
} from './rows.ts';

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

const nothingWritten = (fault: Pick<WriteOutcome, 'conflict'> | Pick<WriteOutcome, 'refused'>) => ({
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

/** The rows of `rows` whose parent (`parentColumn`) is not one of `parents`. */
function withoutParents(
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
async function deleteChildren(
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

/**
 * Gives each row its company's import number (the change feed's order), each employee without
 * an `updated_at` of its own the import's time, and each leave and expense the digest of what
 * it brings along. Answers the employees that bring an `updated_at` of their own, by id.
 */
function stampRows(descriptor: RecordTypeOf, batch: Batch, log: ChangeLog): Map<number, string> {
  const { columns, values } = batch[descriptor.table] as TableRows;
  const width = columns.length;
  const seqAt = columns.indexOf('change_seq');
  const companyAt = columns.indexOf('company_id');
  const idAt = columns.indexOf('id');
  const updatedAt = descriptor.table === 'employees' ? columns.indexOf('updated_at') : -1;
  const digestAt = columns.indexOf('children_digest');
  const digests = digestAt < 0 ? null : childrenDigests(descriptor, batch);
  const ownTimes = new Map<number, string>();
  if (seqAt < 0) return ownTimes;
  for (let row = 0; row < values.length; row += width) {
    const id = values[row + idAt] as number;
    values[row + seqAt] = log.seqOf(values[row + companyAt] as number);
    if (updatedAt >= 0) {
      const own = values[row + updatedAt] as string | null;
      if (own === null) values[row + updatedAt] = log.importTime;
      else ownTimes.set(id, own);
    }
    if (digests) values[row + digestAt] = digests.get(id) ?? null;
  }
  return ownTimes;
}

/**
 * An employee's own `updated_at` is a stored value like the others: a line that differs from the
 * stored employee only there changes it (the upsert compares every other column, and leaves
 * out `updated_at`, which is the import's time on the lines without one). `ownTimes` holds each
 * employee once (a batch keeps a file's last line for an id). Answers how many changed so.
 */
async function writeOwnTimes(
  db: Db,
  log: ChangeLog,
  ownTimes: Map<number, string>,
  groups: Map<number, number[]>,
): Promise<number> {
  let changed = 0;
  for (const [companyId, ids] of groups) {
    for (const chunk of chunks(ids)) {
      const stored = await db
        .selectFrom('employees')
        .select(['id', 'updated_at'])
        .where('company_id', '=', companyId)
        .where('id', 'in', chunk)
        .execute();
      const storedAt = new Map(stored.map((row) => [Number(row.id), row.updated_at]));
      for (const id of chunk) {
        const updatedAt = ownTimes.get(id) as string;
        if (storedAt.get(id) === updatedAt) continue;
        await db
          .updateTable('employees')
          .set({ updated_at: updatedAt, change_seq: log.seqOf(companyId) })
          .where('company_id', '=', companyId)
          .where('id', '=', id)
          .execute();
        changed += 1;
      }
    }
  }
  return changed;
}

/** The stored records among `ids` that this import's number now marks: changed, not inserted. */
async function updatedOf(
  db: Db,
  descriptor: TenantRecordType,
  companyId: number,
  ids: number[],
  seq: number,
) {
  const rows = await db
    .selectFrom(descriptor.table)
    .select('id')
    .where('company_id', '=', companyId)
    .where('change_seq', '=', seq)
    .where('id', 'in', ids)
    .execute();
  return rows.map((row) => Number(row.id));
}

/**
 * The columns that records naming them embed, of the company's stored records among `ids`, as
 * one comparable text per id: what tells a change that reaches leaves and expenses (a new
 * department) from one that does not (a new salary).
 */
async function embeddedValues(
  db: Db,
  descriptor: TenantRecordType,
  companyId: number,
  ids: number[],
): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom(descriptor.table)
    .select(['id', ...descriptor.embedded.map((column) => sql.ref<unknown>(column).as(column))])
    .where('company_id', '=', companyId)
    .where('id', 'in', ids)
    .execute();
  return new Map(
    rows.map((row: Record<string, unknown>) => [
      Number(row.id),
      JSON.stringify(descriptor.embedded.map((column) => row[column])),
    ]),
  );
}

/**
 * A record that comes back forgets its remembered deletion; the import keeps the deletion's
 * number in case a later line deletes the record again (`deleteBatch`).
 */
async function forgetDeletions(
  db: Db,
  log: ChangeLog,
  descriptor: TenantRecordType,
  groups: Map<number, number[]>,
): Promise<void> {
  const resource = feedRank(descriptor.type as RecordType);
  for (const [companyId, ids] of groups) {
    if (!(await log.keepsDeletions(companyId))) continue;
    const forgotten = await db
      .deleteFrom('deleted_records')
      .where('company_id', '=', companyId)
      .where('resource', '=', resource)
      .where('record_id', 'in', ids)
      .returning(['record_id', 'change_seq'])
      .execute();
    for (const row of forgotten) {
      log.cameBack(companyId, resource, Number(row.record_id), Number(row.change_seq));
    }
  }
}

/**
 * A company made by this batch whose id was purged before goes on from the purged one's numbers
 * (migration 0017): its data version, so no answer kept for the purged one is served for it,
 * and its change feed's, with everything up to the purge forgotten, so a cursor of the purged
 * one's feed is answered 410 rather than read on in the new one's.
 */
async function continuePurged(db: Db, companyIds: readonly number[]): Promise<void> {
  const purged = await db
    .selectFrom('purged_companies')
    .selectAll()
    .where('company_id', 'in', companyIds)
    .execute();
  for (const row of purged) {
    const companyId = Number(row.company_id);
    const seq = Number(row.change_seq);
    const made = await db
      .updateTable('companies')
      .set({
        data_version: Number(row.data_version),
        change_seq: seq,
        changes_forgotten_seq: seq,
        changes_forgotten_resource: TENANT_RECORD_TYPES.length - 1,
        changes_forgotten_id: Number.MAX_SAFE_INTEGER,
      })
      .where('id', '=', companyId)
      .where('change_seq', '=', 0)
      .where('data_version', '=', 0)
      .executeTakeFirst();
    if (Number(made.numUpdatedRows) === 0) continue; // not new: it was made again earlier
    await db
      .insertInto('changes_forgotten')
      .values(
        TENANT_RECORD_TYPES.map((_, resource) => ({
          company_id: companyId,
          resource,
          change_seq: seq,
          record_id: Number.MAX_SAFE_INTEGER,
        })),
      )
      .execute();
    await db.deleteFrom('purged_companies').where('company_id', '=', companyId).execute();
  }
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

/**
 * Applies delete lines of one type (docs/import-format.md): an id the company does not have is no
 * change, an id of another company a conflict, a record that stored records still name is
 * refused (naming the first such line and how many name it). A deleted record's children and
 * receipt row go with it, and the change feed remembers the deletion.
 */
export async function deleteBatch(
  db: Db,
  writer: RowWriter,
  log: ChangeLog,
  batch: DeleteBatch,
): Promise<WriteOutcome> {
  const descriptor = recordTypeNamed(batch.type) as TenantRecordType;
  const stored = new Map(
    (await writer.owners(descriptor.table, batch.ids)).map((o) => [
      Number(o.id),
      Number(o.company_id),
    ]),
  );
  const groups = new Map<number, number[]>();
  const lineOf = new Map<number, number>();
  let absentDeletes = 0;
  for (let i = 0; i < batch.ids.length; i++) {
    const id = batch.ids[i] as number;
    const companyId = batch.companyIds[i] as number;
    const owner = stored.get(id);
    if (owner === undefined) {
      absentDeletes += 1;
      continue;
    }
    if (owner !== companyId) {
      const line = batch.lines[i] as number;
      return nothingWritten({
        conflict: { line, label: descriptor.type, id, ownerCompanyId: owner },
      });
    }
    // An earlier line of this batch deletes it: by this line the company no longer has it.
    if (lineOf.has(id)) {
      absentDeletes += 1;
      continue;
    }
    lineOf.set(id, batch.lines[i] as number);
    const group = groups.get(companyId);
    if (group) group.push(id);
    else groups.set(companyId, [id]);
  }
  const refused = await stillNamed(db, descriptor, groups, lineOf);
  if (refused) return nothingWritten({ refused });

  await log.seqsOf([...groups.keys()].sort((a, b) => a - b));
  const replacedReceiptKeys: string[] = [];
  for (const [companyId, ids] of groups) {
    await deleteChildren(db, descriptor, companyId, ids);
    if (descriptor.receipt) replacedReceiptKeys.push(...(await dropReceipts(db, ids, new Map())));
    await db
      .deleteFrom(descriptor.table)
      .where('company_id', '=', companyId)
      .where('id', 'in', ids)
      .execute();
    const seq = log.seqOf(companyId);
    const resource = feedRank(descriptor.type as RecordType);
    // A record that was deleted before this import, came back on an earlier line and goes
    // again: its deletion keeps its number, so a replayed file adds no entry to the feed.
    await db
      .insertInto('deleted_records')
      .values(
        ids.map((id) => ({
          company_id: companyId,
          resource,
          record_id: id,
          change_seq: log.goneAgain(companyId, resource, id) ?? seq,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['company_id', 'resource', 'record_id'])
          .doUpdateSet((eb) => ({ change_seq: eb.ref('excluded.change_seq') })),
      )
      .execute();
    log.deletionsRemembered(companyId);
  }
  return { conflict: null, refused: null, replacedReceiptKeys, absentDeletes };
}

/** The first deleted record (by line) that stored records still name, and how many do. */
async function stillNamed(
  db: Db,
  descriptor: TenantRecordType,
  groups: Map<number, number[]>,
  lineOf: Map<number, number>,
): Promise<WriteOutcome['refused']> {
  const naming = new Map<number, { count: number; by: Set<string> }>();
  for (const [companyId, ids] of groups) {
    for (const dependent of DEPENDENTS.get(descriptor.type as RecordType) ?? []) {
      const rows = await db
        .selectFrom(dependent.descriptor.table)
        .select([
          sql.ref<number>(dependent.field).as('id'),
          (eb) => eb.fn.countAll<number>().as('n'),
        ])
        .where('company_id', '=', companyId)
        .where(sql.ref(dependent.field), 'in', ids)
        .groupBy(sql.ref(dependent.field))
        .execute();
      for (const { id, n } of rows) {
        const entry = naming.get(Number(id)) ?? { count: 0, by: new Set<string>() };
        entry.count += Number(n);
        // A field that names the record in a role of its own says so: `substitute_employee_id`.
        const role = dependent.field.slice(0, -`_${descriptor.type}_id`.length);
        const noun = dependent.descriptor.noun[1];
        entry.by.add(role ? `${noun} as ${role.replaceAll('_', ' ')}` : noun);
        naming.set(Number(id), entry);
      }
    }
  }
  let first: { line: number; id: number } | null = null;
  for (const id of naming.keys()) {
    const line = lineOf.get(id) as number;
    if (!first || line < first.line) first = { line, id };
  }
  if (!first) return null;
  const { count, by } = naming.get(first.id) as { count: number; by: Set<string> };
  const records = count === 1 ? 'record' : 'records';
  return {
    line: first.line,
    field: 'id',
    problem: `${descriptor.type} ${first.id} is still named by ${count} ${records} (${[...by].join(', ')}); delete them on earlier lines`,
  };
}
