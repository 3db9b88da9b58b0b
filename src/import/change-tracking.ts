import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import type { Db } from '../db/database.ts';
import {
  type RecordType,
  type RecordTypeOf,
  TENANT_RECORD_TYPES,
  type TenantRecordType,
} from '../resources/index.ts';
import { type ChangeLog, feedRank } from './change-log.ts';
import { type Batch, childrenDigests, type TableRows } from './rows.ts';

/**
 * What the change feed and the data versions learn from a batch's upserts: the import number
 * each row carries, the stored records it changed (and whether a change reaches the records
 * that embed them), the deletions that records coming back forget, and a purged company's
 * numbers going on.
 */

/**
 * Gives each row its company's import number (the change feed's order), each employee without
 * an `updated_at` of its own the import's time, and each leave and expense the digest of what
 * it brings along. Answers the employees that bring an `updated_at` of their own, by id.
 */
export function stampRows(
  descriptor: RecordTypeOf,
  batch: Batch,
  log: ChangeLog,
): Map<number, string> {
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
export async function writeOwnTimes(
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
export async function updatedOf(
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
export async function embeddedValues(
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
export async function forgetDeletions(
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
export async function continuePurged(db: Db, companyIds: readonly number[]): Promise<void> {
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
