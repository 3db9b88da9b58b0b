import { endianness } from 'node:os';
import { sql } from 'kysely';
import { chunks } from './chunks.ts';
import { nextDataVersion } from './companies.queries.ts';
import type { DatabaseHandle } from './connect.ts';
import type { Db } from './database.ts';
import { type MadeSamples, sampleList } from './list-samples-make.ts';
import {
  type AnyDb,
  SAMPLED_LIST_NAMES,
  SAMPLED_LISTS,
  SAMPLED_MIN_ROWS,
  type SampledList,
  type SampledListName,
} from './sampled-lists.ts';

/**
 * The write side of the list samples, used by the import (and by migrations): the sets an
 * import changes are marked in its transaction, and made and stored after its commit.
 */

/**
 * The version of a set whose samples are being made (after the commit of the import that
 * changed the list): no company has it, so a reader sees the set as behind the data and keeps
 * nothing of what it read without samples (see `loadListSamples`).
 */
const BEING_MADE = -1;

/**
 * In the import's transaction, before the companies' versions move on (`nextDataVersion` at
 * `at`): the sets of the lists the import changed are marked as being made (their samples are
 * made after the commit, `refreshListSamples`), and those of companies whose own row alone
 * changed move to the new version as they are (the same `nextDataVersion`, at the same `at`).
 */
export async function markListSamples(
  trx: Db,
  changed: readonly number[],
  stale: readonly number[],
  at: number,
): Promise<void> {
  const remade = new Set(changed);
  for (const chunk of chunks(stale.filter((companyId) => !remade.has(companyId)))) {
    await trx
      .updateTable('list_sample_sets')
      .set({ data_version: nextDataVersion(at) })
      .where('company_id', 'in', chunk)
      .where('data_version', '=', (eb) =>
        eb
          .selectFrom('companies')
          .select('companies.data_version')
          .whereRef('companies.id', '=', 'list_sample_sets.company_id'),
      )
      .execute();
  }
  for (const chunk of chunks(changed)) {
    await trx.deleteFrom('list_samples').where('company_id', 'in', chunk).execute();
    await trx.deleteFrom('list_sample_months').where('company_id', 'in', chunk).execute();
    await trx
      .insertInto('list_sample_sets')
      .values(
        chunk.flatMap((companyId) =>
          SAMPLED_LIST_NAMES.map((list) => ({
            company_id: companyId,
            list,
            data_version: BEING_MADE,
            groups: '[]',
            totals: '[]',
            longest_leave_days: null,
          })),
        ),
      )
      .onConflict((oc) =>
        oc.columns(['company_id', 'list']).doUpdateSet({
          data_version: BEING_MADE,
          groups: '[]',
          totals: '[]',
          longest_leave_days: null,
        }),
      )
      .execute();
  }
}

/**
 * After an import's commit: makes the samples of every set of the lists `names` (every sampled
 * list unless told) behind its company's data version
 * (those the import marked, and any that an import whose process ended between its commit and
 * its samples left behind), and of every set made before migration 0013 (no month counts), for
 * the version the company has now; those last are replaced as a whole while the old ones are
 * read meanwhile. The sets of lists that are short now go, in one statement a list. Each long
 * list is read in a transaction of its own (a snapshot: the samples, the totals and the version
 * agree) and its samples are written in a short one, only if the company still has that
 * version: an import that changed it since marked it again and samples it itself. No write lock
 * is held while a list is read (the large bench company's two lists: ~9 s on SQLite).
 */
export async function refreshListSamples(
  handle: DatabaseHandle,
  names: readonly SampledListName[] = SAMPLED_LIST_NAMES,
): Promise<void> {
  const { db } = handle;
  for (const name of names) {
    const list: SampledList = SAMPLED_LISTS[name];
    const rows = sql<number>`(select count(*) from (
        select 1 from ${sql.table(list.table)} t where t.company_id = list_sample_sets.company_id
        limit ${sql.lit(SAMPLED_MIN_ROWS)}) counted)`;
    await db.transaction().execute(async (trx) => {
      // A write first: SQLite takes the write lock before it reads.
      const dropped = await trx
        .deleteFrom('list_sample_sets')
        .where('list', '=', name)
        .where(behindItsCompany)
        .where(rows, '<', SAMPLED_MIN_ROWS)
        .returning('company_id')
        .execute();
      for (const chunk of chunks(dropped.map((row) => row.company_id))) {
        for (const table of ['list_samples', 'list_sample_months'] as const) {
          await trx
            .deleteFrom(table)
            .where('list', '=', name)
            .where('company_id', 'in', chunk)
            .execute();
        }
      }
    });
    const behind = await db
      .selectFrom('list_sample_sets')
      .select('company_id')
      .where('list', '=', name)
      .where((eb) => eb.or([behindItsCompany, eb.not(eb.exists(monthsOfSet))]))
      .orderBy('company_id')
      .execute();
    for (const { company_id: companyId } of behind) {
      const made = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => sampleList(trx as unknown as AnyDb, handle, list, Number(companyId)));
      if (made) await storeSamples(db, name, Number(companyId), made);
    }
  }
}

/** A set's month counts: none when it was made before migration 0013. */
const monthsOfSet = sql<number>`(select 1 from list_sample_months m
  where m.company_id = list_sample_sets.company_id and m.list = list_sample_sets.list)`;

/** A set made for another version than its company's. */
const behindItsCompany = sql<boolean>`data_version <> (select c.data_version from companies c
  where c.id = list_sample_sets.company_id)`;

/**
 * Replaces the company's set of the list with `made`, in one short transaction, if the company
 * still has the version it was read at. Its first statement writes, so SQLite takes the write
 * lock before it reads the version (a deferred read first could not write after another
 * connection's commit).
 */
async function storeSamples(
  db: Db,
  name: SampledListName,
  companyId: number,
  made: MadeSamples,
): Promise<void> {
  const superseded = new Error('superseded');
  try {
    await db.transaction().execute(async (trx) => {
      for (const table of ['list_samples', 'list_sample_months', 'list_sample_sets'] as const) {
        await trx
          .deleteFrom(table)
          .where('company_id', '=', companyId)
          .where('list', '=', name)
          .execute();
      }
      const company = await trx
        .selectFrom('companies')
        .select('data_version')
        .where('id', '=', companyId)
        .executeTakeFirst();
      if (Number(company?.data_version) !== made.version) throw superseded;
      if (made.short) return;
      await trx
        .insertInto('list_sample_sets')
        .values({
          company_id: companyId,
          list: name,
          data_version: made.version,
          groups: JSON.stringify(made.groups),
          totals: JSON.stringify(made.totals),
          longest_leave_days: made.longest,
        })
        .execute();
      for (const [column, samples] of made.columns) {
        for (const chunk of chunks(samples.map((sample, seq) => ({ sample, seq })))) {
          await trx
            .insertInto('list_samples')
            .values(
              chunk.map(({ sample, seq }) => ({
                company_id: companyId,
                list: name,
                sort_column: column,
                seq,
                sort_value: JSON.stringify(sample.value),
                id: sample.id,
                counts: JSON.stringify(sample.counts),
              })),
            )
            .execute();
        }
      }
      for (const [column, dated] of made.months) {
        for (const { column: dateColumn, first, months, counts } of dated) {
          await trx
            .insertInto('list_sample_months')
            .values({
              company_id: companyId,
              list: name,
              sort_column: column,
              date_column: dateColumn,
              first_month: first,
              months,
              statuses: JSON.stringify(made.statuses),
              counts: littleEndianBytes(counts),
            })
            .execute();
        }
      }
    });
  } catch (error) {
    if (error !== superseded) throw error;
  }
}

/** Counts as little-endian bytes, as list_sample_months stores them. */
function littleEndianBytes(counts: Int32Array): Uint8Array {
  if (endianness() === 'LE')
    return new Uint8Array(counts.buffer, counts.byteOffset, counts.byteLength);
  const bytes = new Uint8Array(counts.length * 4);
  const view = new DataView(bytes.buffer);
  counts.forEach((count, i) => {
    view.setInt32(i * 4, count, true);
  });
  return bytes;
}
