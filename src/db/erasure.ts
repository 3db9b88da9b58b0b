import { sql } from 'kysely';
import { runOnThread } from '../threads.ts';
import { type DatabaseHandle, sqliteFileOf } from './connect.ts';
import type { Db } from './database.ts';

/**
 * What a deletion leaves behind in a SQLite file, beyond the rows themselves, and how it goes
 * (a record deleted at the source, and an employee's right to erasure, must leave the mirror;
 * docs/production.md, "Erasure: deleted values on disk").
 *
 * - Free space: every connection sets `secure_delete` (src/db/connect.ts), so SQLite writes
 *   zeros over a deleted or replaced row and over pages it frees.
 * - The trigram search tables: FTS5 records a deletion as a marker in a new segment and keeps
 *   the deleted row's terms in the older ones until they are merged. `mergeSearchTables`
 *   merges them into one without the deleted rows, in the deleting transaction.
 * - The write-ahead log: it keeps the pages as they were before (the deleted row in them)
 *   until it is reset and written over. `truncateWriteAheadLog` copies it into the file and
 *   empties it, after the commit.
 *
 * PostgreSQL has none of these settings: dead rows stay in their pages until VACUUM, and in
 * the server's own write-ahead log and backups (the operator's procedure is documented).
 */

/** The SQLite FTS5 tables whose content is `table`'s rows. */
export async function searchTablesOf(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master
    where type = 'table' and sql like 'create virtual table%' and sql like ${`%content='${table}'%`}`.execute(
    db,
  );
  return rows.map((row) => row.name);
}

/**
 * SQLite: merges the segments of the search tables over `tables` into one, which drops the
 * terms of every row deleted from them (`optimize`: ~1 s for the bench's 1.25 million
 * expenses). Runs in the deleting transaction, so the deletion and the merge commit together.
 */
export async function mergeSearchTables(trx: Db, tables: Iterable<string>): Promise<void> {
  for (const table of tables) {
    for (const fts of await searchTablesOf(trx, table)) {
      await sql.raw(`insert into ${fts}(${fts}) values ('optimize')`).execute(trx);
    }
  }
}

/**
 * SQLite: copies the write-ahead log into the database file and truncates it to nothing, so
 * the pages it held from before a deletion are gone from disk (as far as SQLite can see:
 * below it, the file system decides when freed blocks are written over). Waits for readers
 * that still use the log as long as the busy timeout allows; one that holds it longer leaves
 * the log as it is until the next deleting import or purge, or until the last connection to
 * the file closes (SQLite then copies the log and deletes it). Returns false then, so the
 * operator is told (`deleted_values_in_wal` of an import's or a purge's summary).
 */
export function truncateWriteAheadLog(handle: DatabaseHandle): boolean {
  if (handle.dialect !== 'sqlite' || handle.sqlite.memory) return true;
  const [result] = handle.sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}

/**
 * `truncateWriteAheadLog` on a thread of its own (`checkpoint-thread.ts`) with a connection of
 * its own, for the service: better-sqlite3 waits for the readers, and copies the log, on the
 * calling thread, and every request of the instance needs its event loop (an admin import of
 * 20,000 deletions while clients read held `/me` for 399–422 ms at its end).
 */
export function truncateWriteAheadLogOnThread(handle: DatabaseHandle): Promise<boolean> {
  const file = sqliteFileOf(handle);
  if (!file) return Promise.resolve(truncateWriteAheadLog(handle));
  return runOnThread<boolean>(import.meta.url, 'checkpoint-thread', file).result;
}
