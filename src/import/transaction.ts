import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { nextDataVersion } from '../db/companies.queries.ts';
import { type DatabaseHandle, type SqliteFile, sqliteFileOf } from '../db/connect.ts';
import { forgetInThisProcess } from '../db/data-versions.ts';
import type { Db } from '../db/database.ts';
import { mergeSearchTables } from '../db/erasure.ts';
import { refreshExpenseTexts } from '../db/expense-texts.ts';
import { refreshLeaveCounts } from '../db/leave-counts.ts';
import { markListSamples } from '../db/list-samples-refresh.ts';
import { recordTypeNamed, type TenantRecordType } from '../resources/index.ts';
import { errorFromThread, type PostedError, runOnThread } from '../threads.ts';
import { ChangeLog, type ChangeLogOptions } from './change-log.ts';
import {
  holdsNoListedRows,
  type IndexStep,
  rebuildIndexes,
  setEveryTableAside,
  setIndexesAside,
} from './deferred-indexes.ts';
import { deleteBatch } from './deleter.ts';
import { rowWriter } from './row-writer.ts';
import type { Batch, DeleteBatch } from './rows.ts';
import { type WriteOutcome, writeBatch } from './writer.ts';

/** Where an import's rows go: one transaction that takes every batch, or none of them. */
export interface ImportTransaction {
  /**
   * Reads the stored records the file names but does not bring: the transaction itself, or,
   * for one on the writer thread, the committed data, which holds the same such records.
   */
  readonly reader: Db;
  /**
   * Writes and deletes may be asked for before the ones asked for earlier have settled: they
   * are applied one at a time, in the order they were asked for.
   */
  write(batch: Batch): Promise<WriteOutcome>;
  delete(batch: DeleteBatch): Promise<WriteOutcome>;
  /**
   * Builds what a first load set aside, finishes the change feed's entries, gives every
   * company whose data changed a new data version (so nothing cached from before is served
   * after the commit), and commits; `onStep` hears of each step as it starts.
   */
  commit(onStep?: OnCommitStep): Promise<CommittedImport>;
  /** Undoes everything; does nothing once the transaction has ended. */
  rollback(): Promise<void>;
}

/** A committed import. */
export interface CommittedImport {
  /**
   * Settles once the transaction's connection is done: a writer thread's copy of its
   * write-ahead log into the database file runs on after the commit.
   */
  written: Promise<void>;
}

/**
 * What a commit is doing: after the last record it can take longer than reading the file did
 * (the large bench import: 27–32 s of reading, then 35 s of these), so `cdapi import` says
 * which. `indexes` and `search` are a first load's (see `setIndexesAside`), one table at a time;
 * `summaries` is on SQLite, after delete lines, also the merge of the search tables they
 * deleted from (`mergeSearchTables`); `commit` is on SQLite without a writer thread also the
 * copy of the write-ahead log into the database file. `samples` and `statistics` are the
 * importer's, after the commit (`refreshListSamples`, `refreshPlannerStatistics`), while a
 * writer thread copies its write-ahead log into the file; `checkpoint` is the wait for the
 * rest of that copy.
 */
export type CommitStep =
  | IndexStep
  | { name: 'feed' | 'summaries' | 'commit' | 'samples' | 'statistics' | 'checkpoint' };

export type OnCommitStep = (step: CommitStep) => void;

/**
 * A transaction on `handle`'s own connection, in this thread.
 *
 * `uncheckedFirstLoad` is for a connection that is the import's alone (the writer thread's):
 * a first load into SQLite (no table with a list holds a row) then runs without SQLite's
 * foreign-key checks. The importer has already checked every reference of every record
 * (`References`: a record the file brought earlier or the database holds, of the same company,
 * reported by line and field), and children (items, attachments, receipts) come inside their
 * parent's record. The bench file's ten million look-ups of parents took 7–8 s of its first
 * load (docs/performance.md, item 62). Every other import keeps them as a second wall. The
 * setting is the connection's and cannot change inside a transaction, so it is set before the
 * transaction starts and set back when it ends (on a shared connection another statement could
 * run between the two); should another import store rows between the look and this one's write
 * lock, the transaction starts again with the checks on.
 */
export async function beginImport(
  handle: DatabaseHandle,
  options: ChangeLogOptions,
  uncheckedFirstLoad = false,
): Promise<ImportTransaction> {
  const unchecked =
    uncheckedFirstLoad && handle.dialect === 'sqlite' && (await holdsNoListedRows(handle.db));
  const checkForeignKeys = (on: boolean) => {
    if (unchecked && handle.dialect === 'sqlite') {
      handle.sqlite.pragma(`foreign_keys = ${on ? 'ON' : 'OFF'}`);
    }
  };
  checkForeignKeys(false);
  const trx = await handle.db
    .startTransaction()
    .execute()
    .catch((error: unknown) => {
      checkForeignKeys(true);
      throw error;
    });
  const ended = () => trx.isCommitted || trx.isRolledBack;
  let raced = false;
  try {
    if (handle.dialect === 'sqlite') await takeSqliteWriteLock(trx);
    const setAside = await setIndexesAside(trx, handle.dialect);
    raced = unchecked && !setEveryTableAside(setAside);
    if (raced) throw new Error('another import stored rows before this one took the write lock');
    const writer = rowWriter(handle, trx);
    const log = new ChangeLog(trx, options);
    const deletedFrom = new Set<string>();
    // A batch's statements never interleave with the next batch's.
    let last: Promise<unknown> = Promise.resolve();
    const inTurn = (apply: () => Promise<WriteOutcome>) => {
      const applying = last.then(apply);
      last = applying.catch(() => {});
      return applying;
    };
    return {
      reader: trx,
      write: (batch) => inTurn(() => writeBatch(trx, writer, log, batch)),
      delete: (batch) =>
        inTurn(async () => {
          const outcome = await deleteBatch(trx, writer, log, batch);
          // Lines that all named ids the company did not have (a replayed delta) removed
          // nothing: no search table to merge for them.
          if (outcome.absentDeletes < batch.ids.length) {
            deletedFrom.add((recordTypeNamed(batch.type) as TenantRecordType).table);
          }
          return outcome;
        }),
      async commit(onStep = () => {}) {
        await rebuildIndexes(trx, handle.dialect, setAside, onStep);
        onStep({ name: 'feed' });
        const { changed, stale } = await log.finish();
        const at = Date.now();
        await markListSamples(trx, changed, stale, at);
        for (const companyIds of chunks(stale)) {
          await trx
            .updateTable('companies')
            .set({ data_version: nextDataVersion(at) })
            .where('id', 'in', companyIds)
            .execute();
        }
        onStep({ name: 'summaries' });
        await refreshExpenseTexts(trx, changed);
        await refreshLeaveCounts(trx, changed);
        if (handle.dialect === 'sqlite') await mergeSearchTables(trx, deletedFrom);
        onStep({ name: 'commit' });
        await trx.commit().execute();
        forgetInThisProcess(stale);
        checkForeignKeys(true);
        return { written: Promise.resolve() };
      },
      async rollback() {
        if (!ended()) await trx.rollback().execute();
        checkForeignKeys(true);
      },
    };
  } catch (error) {
    await trx.rollback().execute();
    checkForeignKeys(true);
    if (raced) return beginImport(handle, options, false);
    throw error;
  }
}

/**
 * SQLite has one writer at a time. A transaction that reads before it writes and finds another
 * writer at its first write fails at once (it cannot wait: its snapshot would be stale), so a
 * second import failed with "database is locked" at once; one whose first statement writes
 * waits for the busy timeout like any other command. The statement writes no row.
 */
async function takeSqliteWriteLock(trx: Db): Promise<void> {
  try {
    await sql`delete from companies where 0`.execute(trx);
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    // Still SQLITE_BUSY, which the admin API answers 503 with Retry-After.
    throw Object.assign(
      new Error(
        'another import or command is writing to this SQLite database, which takes one writer at a time: run this import again when it has finished',
      ),
      { code: 'SQLITE_BUSY' },
    );
  }
}

/** What the main thread asks the writer thread; each request gets one reply, in order. */
export type WriterRequest =
  | { op: 'write'; batch: Batch }
  | { op: 'delete'; batch: DeleteBatch }
  | { op: 'commit' }
  // Answered by the job's end, as the file is closed after a commit or a failure.
  | { op: 'rollback' };

/** The answer to the transaction's start (the first reply) or to one request. */
export type WriterReply = { ok: true; value?: unknown } | ({ ok: false } & PostedError);

/** What the writer thread posts: replies, and during a commit the step it starts. */
export type WriterMessage = WriterReply | { step: CommitStep };

/** What the writer thread opens: the SQLite file the import goes into. */
export interface WriterThreadData extends SqliteFile {
  changes: ChangeLogOptions;
}

/**
 * The writer holds at most two batches (the importer's BATCHES_IN_FLIGHT; each at most 500
 * records and 5,000 items or attachments, a few MB); without limits its heap grew to ~50 MB
 * before V8 collected it, and the large bench import peaked at 310–370 MB of RSS instead of
 * ~250 MB.
 */
const WRITER_HEAP_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 };

/**
 * A transaction on a second connection to the same SQLite file, run by a worker thread: the
 * rows of one batch are written there while this thread reads and checks the next. SQLite's
 * own work is more than half of a large import; on one thread it waited for the parsing and
 * the parsing for it. Only for files (the thread cannot see an in-memory database). A thread
 * costs ~0.25 s of CPU to start (`runOnThread` keeps it a few seconds for the next import), so
 * `importFile` uses one only for large files; the admin API always does.
 */
export async function beginImportOnThread(
  handle: DatabaseHandle,
  options: ChangeLogOptions,
): Promise<ImportTransaction> {
  const file = sqliteFileOf(handle);
  if (!file) throw new Error('the writer thread opens SQLite files, not PostgreSQL or memory');
  const waiting: Array<{ resolve: (value: unknown) => void; reject: (error: Error) => void }> = [];
  let ended = false;
  const failAll = (error: Error) => {
    ended = true;
    for (const { reject } of waiting.splice(0)) reject(error);
  };
  let onCommitStep: OnCommitStep | undefined;
  const data: WriterThreadData = { ...file, changes: options };
  const job = runOnThread<void>(import.meta.url, 'writer-thread', data, {
    resourceLimits: WRITER_HEAP_LIMITS,
    onMessage: (message: WriterMessage) => {
      if ('step' in message) {
        onCommitStep?.(message.step);
        return;
      }
      const next = waiting.shift();
      if (!next) return;
      if (message.ok) next.resolve(message.value);
      else {
        // The writer thread rolls back and ends the job after any failed request.
        ended = true;
        next.reject(errorFromThread(message));
      }
    },
  });
  // The job ends once the transaction has and the thread's connection is closed: a request
  // still waiting then (sent after the one that failed) gets no answer.
  const closed = job.result.then(
    () => failAll(new Error("the import's transaction has ended")),
    (error: Error) => {
      failAll(error);
      throw error;
    },
  );
  closed.catch(() => {});
  const reply = () =>
    new Promise<unknown>((resolve, reject) => {
      waiting.push({ resolve, reject });
    });
  const request = (message: WriterRequest) => {
    if (ended) return Promise.reject(new Error("the import's transaction has ended"));
    job.post(message);
    return reply();
  };
  // The transaction's start; on failure the job has ended (the reason is the job's error).
  await reply();
  return {
    reader: handle.db,
    write: (batch) => request({ op: 'write', batch }) as Promise<WriteOutcome>,
    delete: (batch) => request({ op: 'delete', batch }) as Promise<WriteOutcome>,
    async commit(onStep) {
      onCommitStep = onStep;
      await request({ op: 'commit' });
      return { written: closed };
    },
    async rollback() {
      // Answered by the job's end, after the requests before it.
      if (!ended) {
        ended = true;
        job.post({ op: 'rollback' } satisfies WriterRequest);
      }
      await closed.catch(() => {});
    },
  };
}
