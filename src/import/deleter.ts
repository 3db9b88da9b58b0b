import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import {
  DEPENDENTS,
  type RecordType,
  recordTypeNamed,
  type TenantRecordType,
} from '../resources/index.ts';
import { type ChangeLog, feedRank } from './change-log.ts';
import { deleteChildren, dropReceipts } from './record-children.ts';
import type { RowWriter } from './row-writer.ts';
import type { DeleteBatch } from './rows.ts';
import { nothingWritten, type WriteOutcome } from './writer.ts';

/** A batch's delete lines applied, or refused while stored records still name a record. */

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
