import { nextDataVersion } from '../db/companies.queries.ts';
import { type DatabaseHandle, type SqliteFile, sqliteFileOf } from '../db/connect.ts';
import { forgetInThisProcess } from '../db/data-versions.ts';
import type { Database, Db } from '../db/database.ts';
import { mergeSearchTables, truncateWriteAheadLog } from '../db/erasure.ts';
import { receiptFilesInUse } from '../db/receipts.queries.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { runOnThread } from '../threads.ts';

/** What a purge removed: the company, and how many of each of its things. */
export interface PurgeSummary {
  company: { id: number; name: string };
  removed: {
    employees: number;
    leave_types: number;
    leaves: number;
    expense_categories: number;
    expenses: number;
    receipt_files: number;
    api_keys: number;
  };
  /**
   * The receipt files the store could not remove (a read-only folder, say), each with why: the
   * rows are gone all the same, and nothing names these files any more.
   */
  receipt_files_left: Array<{ path: string; reason: string }>;
  /** See ImportSummary's. */
  deleted_values_in_wal: boolean;
}

type CompanyTable = Exclude<keyof Database, 'companies' | 'import_stats' | 'purged_companies'>;

/**
 * Every table with rows of a company, children before the rows they name (leaves name
 * employees and leave types; items, attachments and receipts name their record).
 */
export const COMPANY_TABLES: readonly CompanyTable[] = [
  'receipts',
  'expense_items',
  'expenses',
  'expense_categories',
  'leave_attachments',
  'leaves',
  'leave_types',
  'employees',
  'list_samples',
  'list_sample_months',
  'list_sample_sets',
  'expense_texts',
  'leave_counts',
  'change_commits',
  'deleted_records',
  'changes_forgotten',
  'api_keys',
];

const COUNTED = [
  'employees',
  'leave_types',
  'leaves',
  'expense_categories',
  'expenses',
  'api_keys',
] as const;

async function countOf(db: Db, table: CompanyTable, companyId: number): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** What `purgeRows` deleted, and whether it could empty the write-ahead log afterwards. */
export interface PurgedRows {
  company: { id: number; name: string };
  counts: Record<(typeof COUNTED)[number], number>;
  /** The receipt files the company's rows named. */
  files: string[];
  logEmptied: boolean;
}

/**
 * Deletes a company's rows in one transaction (locking the company row first: an import of the
 * company running now finishes before), then empties SQLite's write-ahead log of their old
 * values (src/db/erasure.ts). Null when there is no such company.
 */
export async function purgeRows(
  handle: DatabaseHandle,
  companyId: number,
): Promise<PurgedRows | null> {
  const purged = await handle.write((db) =>
    db.transaction().execute(async (trx) => {
      const company = await trx
        .updateTable('companies')
        .set({ data_version: nextDataVersion(Date.now()) })
        .where('id', '=', companyId)
        .returning(['id', 'name', 'data_version', 'change_seq'])
        .executeTakeFirst();
      if (!company) return null;
      // Its numbers stay: a company imported again under this id goes on from them.
      const numbers = {
        data_version: Number(company.data_version),
        change_seq: Number(company.change_seq) + 1,
      };
      await trx
        .insertInto('purged_companies')
        .values({ company_id: companyId, ...numbers })
        .onConflict((oc) => oc.column('company_id').doUpdateSet(numbers))
        .execute();
      const counts = Object.fromEntries(
        await Promise.all(
          COUNTED.map(async (table) => [table, await countOf(trx, table, companyId)] as const),
        ),
      ) as PurgedRows['counts'];
      const receipts = await trx
        .selectFrom('receipts')
        .select(['original_key', 'processed_key'])
        .where('company_id', '=', companyId)
        .execute();
      for (const table of COMPANY_TABLES) {
        await trx.deleteFrom(table).where('company_id', '=', companyId).execute();
      }
      await trx.deleteFrom('companies').where('id', '=', companyId).execute();
      if (handle.dialect === 'sqlite') await mergeSearchTables(trx, ['employees', 'expenses']);
      const files = [...new Set(receipts.flatMap((r) => [r.original_key, r.processed_key]))];
      return { company: { id: Number(company.id), name: company.name }, counts, files };
    }),
  );
  if (purged) forgetInThisProcess([companyId]);
  return purged && { ...purged, logEmptied: truncateWriteAheadLog(handle) };
}

/**
 * Deletes a company with all its records, keys and receipt files (docs/admin-api.md, `cdapi
 * companies purge`), in one transaction; the files go after the commit, each unless another row
 * still uses it. Its keys are refused from then on (running services within their 1 s key cache).
 * Null when there is no such company.
 *
 * A SQLite file's rows are deleted on a thread of its own (`purge-thread.ts`): better-sqlite3
 * runs each statement to its end on the calling thread, and the admin API purges from inside
 * the service, whose event loop every request needs (700,000 records took two minutes).
 */
export async function purgeCompany(
  handle: DatabaseHandle,
  store: ReceiptStore,
  companyId: number,
): Promise<PurgeSummary | null> {
  const file = sqliteFileOf(handle);
  const purged = file
    ? await purgeRowsOnThread({ ...file, companyId })
    : await purgeRows(handle, companyId);
  if (!purged) return null;
  let removedFiles = 0;
  const left: PurgeSummary['receipt_files_left'] = [];
  const used = await receiptFilesInUse(handle.db, purged.files);
  for (const key of purged.files) {
    if (used.has(key)) continue;
    // After the commit: a file that cannot go is told, not a failure of the purge.
    try {
      if (!(await store.exists(key))) continue;
      await store.delete(key);
      removedFiles += 1;
    } catch (error) {
      left.push({ path: key, reason: (error as NodeJS.ErrnoException).code ?? String(error) });
    }
  }
  return {
    company: purged.company,
    removed: { ...purged.counts, receipt_files: removedFiles },
    receipt_files_left: left,
    deleted_values_in_wal: !purged.logEmptied,
  };
}

/** What the purge thread is given. */
export interface PurgeThreadData extends SqliteFile {
  companyId: number;
}

function purgeRowsOnThread(data: PurgeThreadData): Promise<PurgedRows | null> {
  return runOnThread<PurgedRows | null>(import.meta.url, 'purge-thread', data).result;
}
