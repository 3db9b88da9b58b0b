import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type DatabaseHandle, sqliteFileOf } from '../db/connect.ts';
import { truncateWriteAheadLog, truncateWriteAheadLogOnThread } from '../db/erasure.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { RECORD_TYPES } from '../resources/index.ts';
import { settleAll } from '../settled.ts';
import { afterCommit, type DerivedThreads, refreshDerived } from './derived.ts';
import { readNdjson, type SourceRecord } from './ndjson.ts';
import { deletedRecords, ImportSession, type ImportSummary } from './session.ts';
import {
  beginImport,
  beginImportOnThread,
  type CommittedImport,
  type OnCommitStep,
} from './transaction.ts';

const BATCH_SIZE = 500;
/**
 * Batches sent to the transaction and not yet written. With one, the reading thread and the
 * writer thread each waited for the other whenever a batch took one of them longer than the
 * other: the two cores were 77 % busy, and the bench file's records took 30 and 32 s to stream
 * into SQLite; with two, 88 % and 26 and 26 s (runs alternating; three or four: no faster).
 */
const BATCHES_IN_FLIGHT = 2;
/**
 * Children (items, attachments) that end a batch early: a record may bring 500 items, and a
 * batch of such records would hold a quarter of a million rows (over 100 MB) at once.
 */
const BATCH_CHILDREN = 5000;

export interface ImportOptions {
  /**
   * Writes the rows on a second thread (SQLite files only; see `beginImportOnThread`). By
   * default `importFile` does for files of WRITER_THREAD_MIN_BYTES and more.
   */
  writerThread?: boolean;
  /**
   * Does the work after the commit on threads of their own (SQLite files only), as the admin
   * API does inside the service: the list samples and planner statistics (`refreshDerived`)
   * and, after deletions, the emptying of the write-ahead log
   * (`truncateWriteAheadLogOnThread`). `cdapi import`, whose process serves nothing, does it on
   * its main thread, but for a file written by a writer thread samples one of the two long
   * lists on a thread beside it (`derivedThreads`).
   */
  afterCommitOnThreads?: boolean;
  /** `importFile`: called as the file is read, once a chunk (64 KiB) of it is checked. */
  onProgress?: (progress: ImportProgress) => void;
  /** Called as each step after the last record starts (see `CommitStep`). */
  onStep?: OnCommitStep;
  /** How long the change feed remembers deletions (CHANGES_RETENTION_DAYS); default 30. */
  changesRetentionDays?: number;
  /**
   * Stops the import before its commit, rolled back as a failed one is (the receipt files it
   * added removed), with the signal's reason as its error. Once the commit has begun, the
   * import completes.
   */
  signal?: AbortSignal;
}

export const DEFAULT_CHANGES_RETENTION_DAYS = 30;

export interface ImportProgress {
  bytesRead: number;
  totalBytes: number;
  /** Records read so far (blank lines are not records). */
  records: number;
}

/** From this size on, a SQLite import writes on a thread of its own. */
export const WRITER_THREAD_MIN_BYTES = 16 * 1024 * 1024;

export async function importFile(
  handle: DatabaseHandle,
  store: ReceiptStore,
  file: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const info = await stat(file).catch(() => null);
  if (!info && file === '-') {
    throw new Error('cannot read -: standard input is not read: save the export to a file first');
  }
  if (!info) throw new Error(`cannot read ${file}: no such file`);
  if (!info.isFile()) {
    // A file's size is its progress's 100 %, and a failed import can be run again on it.
    const kind = info.isDirectory()
      ? 'a directory'
      : info.isFIFO()
        ? 'a pipe'
        : 'a device or socket';
    throw new Error(`cannot read ${file}: ${kind}, not a file: save the export to a file first`);
  }
  const writerThread = options.writerThread ?? info.size >= WRITER_THREAD_MIN_BYTES;
  const { onProgress, onStep, changesRetentionDays, signal, afterCommitOnThreads } = options;
  const source = readNdjson(
    file,
    onProgress && ((read) => onProgress({ ...read, totalBytes: info.size })),
  );
  return importRecords(handle, store, source, dirname(resolve(file)), {
    writerThread,
    afterCommitOnThreads,
    onStep,
    changesRetentionDays,
    signal,
  });
}

/**
 * Where the work after an import's commit runs (see `refreshDerived`): on threads only when the
 * service imports; beside this thread for a large import, whose two long lists take seconds
 * each to sample; on this thread for a small one, which a thread's start (~0.25 s) would slow.
 */
function derivedThreads(options: ImportOptions): DerivedThreads {
  if (options.afterCommitOnThreads) return 'all';
  return options.writerThread ? 'beside' : 'none';
}

/**
 * Imports records in one transaction: all of them, or (on the first bad record) none, with
 * the receipt files this import added removed again. `source` yields records in batches (any
 * size); `baseDir` is where receipt paths start.
 */
export async function importRecords(
  handle: DatabaseHandle,
  store: ReceiptStore,
  source: AsyncIterable<readonly SourceRecord[]>,
  baseDir: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const session = new ImportSession(store, baseDir);
  const changes = {
    retentionDays: options.changesRetentionDays ?? DEFAULT_CHANGES_RETENTION_DAYS,
  };
  // The thread opens the file again: not an in-memory database, nor PostgreSQL.
  const transaction =
    options.writerThread && sqliteFileOf(handle)
      ? await beginImportOnThread(handle, changes)
      : await beginImport(handle, changes);
  let committed: CommittedImport;
  try {
    // Batches are written while the next is read (by PostgreSQL in its own process, by the
    // writer thread, or by SQLite here while a receipt is processed), in file order, each
    // after the one before (the transaction sees to that).
    const inFlight: Promise<void>[] = [];
    const flush = async () => {
      if (inFlight.length >= BATCHES_IN_FLIGHT) {
        // A failed batch stays first in line: `settle` below waits for the batches after it,
        // then throws its error.
        await inFlight[0];
        inFlight.shift();
      }
      const writing = session.flush(transaction);
      // Its failure is thrown where it is awaited; until then it is not unhandled.
      writing.catch(() => {});
      inFlight.push(writing);
    };
    /** Waits for every batch sent; throws the failure of the first that failed. */
    const settle = () => settleAll(inFlight.splice(0));
    try {
      for await (const records of source) {
        options.signal?.throwIfAborted();
        for (const { line, value } of records) {
          const record = session.parse(line, value);
          if (session.mustFlushBefore(record)) await flush();
          // Most records need no database look-up and no file: no promise to wait for.
          const adding = session.add(transaction.reader, line, record);
          if (adding) await adding;
          if (session.pendingCount >= BATCH_SIZE || session.pendingChildren >= BATCH_CHILDREN) {
            await flush();
          }
        }
      }
    } catch (error) {
      // The batches being written hold earlier lines: their error, if any, is the first one;
      // the transaction is rolled back only once every batch sent is done with.
      await settle();
      throw error;
    }
    await settle();
    await session.flush(transaction);
    options.signal?.throwIfAborted();
    committed = await transaction.commit(options.onStep);
  } catch (error) {
    // A rollback that fails too (a lost PostgreSQL connection) has ended the transaction as
    // well; the first error is the one to report.
    await transaction.rollback().catch(() => {});
    await session.receipts.removeAdded(handle.db);
    throw error;
  }
  // Derived from the committed data while a writer thread copies its write-ahead log into the
  // file (the large bench file's first load: samples 9–13 s beside a copy of 6–10 s).
  let written = false;
  const writing = committed.written.then(() => {
    written = true;
  });
  writing.catch(() => {});
  const unfinished = await refreshDerived(handle, derivedThreads(options), options.onStep);
  if (!written) options.onStep?.({ name: 'checkpoint' });
  const copied = await afterCommit(
    'copying the write-ahead log into the database file',
    () => writing,
    'SQLite copies it at a later checkpoint',
  );
  const removed = await afterCommit(
    'removing the receipt files the import replaced',
    () => session.receipts.removeReplaced(handle.db),
    'they stay in the store, named by no record and never served',
  );
  const summary = session.summary();
  summary.unfinished_steps = [...unfinished, copied, removed].filter((step) => step !== null);
  // The log still holds the deleted records' pages as they were (src/db/erasure.ts); delete
  // lines of ids the company did not have deleted nothing.
  const deleted = RECORD_TYPES.some(({ type }) => deletedRecords(summary, type) > 0);
  if (deleted) {
    const emptied = options.afterCommitOnThreads
      ? await truncateWriteAheadLogOnThread(handle)
      : truncateWriteAheadLog(handle);
    summary.deleted_values_in_wal = !emptied;
  }
  return summary;
}
