import type { MessagePort } from 'node:worker_threads';
import { openSqliteFileAgain } from '../db/connect.ts';
import { postedError, serveJobs } from '../threads.ts';
import {
  beginImport,
  type ImportTransaction,
  type WriterMessage,
  type WriterRequest,
  type WriterThreadData,
} from './transaction.ts';

/**
 * The writer threads of imports into SQLite files (see `beginImportOnThread`): each job opens
 * its own connection, starts the import's transaction, says so, and answers each request in
 * turn. After a commit, a rollback or any failure it closes the connection, and the job ends;
 * requests that came after (the main thread sends the next batch before the last is written)
 * are not answered.
 */
serveJobs(async ({ changes, ...file }: WriterThreadData, port: MessagePort) => {
  const handle = openSqliteFileAgain(file);
  const { sqlite } = handle;
  const send = (message: WriterMessage) => port.postMessage(message);
  /** Answers `request`; whether the transaction is still open after it. */
  async function answer(transaction: ImportTransaction, request: WriterRequest): Promise<boolean> {
    try {
      switch (request.op) {
        case 'write':
          send({ ok: true, value: await transaction.write(request.batch) });
          return true;
        case 'delete':
          send({ ok: true, value: await transaction.delete(request.batch) });
          return true;
        case 'commit':
          await transaction.commit((step) => send({ step }));
          send({ ok: true });
          // The importer samples the changed lists on another connection meanwhile.
          sqlite.pragma('wal_checkpoint(PASSIVE)');
          return false;
        case 'rollback':
          await transaction.rollback();
          return false;
      }
    } catch (error) {
      await transaction.rollback().catch(() => {});
      send({ ok: false, ...postedError(error) });
      return false;
    }
  }
  try {
    /**
     * The commit does not copy the write-ahead log into the file itself (SQLite's automatic
     * checkpoint, in the COMMIT): the commit is answered first, then the log copied (~2.3 GB
     * after the large bench file's first load, 6–10 s), while the importer makes the list
     * samples on another connection (`refreshDerived`), which need the commit and not the copy.
     */
    sqlite.pragma('wal_autocheckpoint = 0');
    // This connection is the import's alone: a first load may leave references to the importer.
    const transaction = await beginImport(handle, changes, true);
    await new Promise<void>((ended) => {
      let open = true;
      let queue = Promise.resolve();
      port.on('message', (request: WriterRequest) => {
        queue = queue.then(async () => {
          if (!open) return;
          open = await answer(transaction, request);
          if (!open) ended();
        });
      });
      send({ ok: true });
    });
  } finally {
    await handle.close();
  }
});
