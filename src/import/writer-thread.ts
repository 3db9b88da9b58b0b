import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFileAgain } from '../db/connect.ts';
import { postedError } from '../threads.ts';
import {
  beginImport,
  type ImportTransaction,
  type WriterMessage,
  type WriterReply,
  type WriterRequest,
  type WriterThreadData,
} from './transaction.ts';

/**
 * The writer thread of an import into a SQLite file (see `beginImportOnThread`): it opens its
 * own connection, starts the import's transaction, and answers each request in turn. After a
 * commit, a rollback or any failure it closes the connection and stops taking requests.
 */
const port = parentPort;
if (!port) throw new Error('writer-thread.ts runs as a worker thread');
const { changes, ...file } = workerData as WriterThreadData;
const handle = openSqliteFileAgain(file);
const { sqlite } = handle;
/**
 * The commit does not copy the write-ahead log into the file itself (SQLite's automatic
 * checkpoint, in the COMMIT): the commit is answered first, then the log copied (~2.3 GB after
 * the large bench file's first load, 6–10 s), while the importer makes the list samples on
 * another connection (`refreshDerived`), which need the commit and not the copy.
 */
sqlite.pragma('wal_autocheckpoint = 0');

const send = (message: WriterMessage) => port.postMessage(message);
const failure = (error: unknown): WriterReply => ({ ok: false, ...postedError(error) });

async function answer(transaction: ImportTransaction, request: WriterRequest): Promise<boolean> {
  try {
    switch (request.op) {
      case 'write':
        send({ ok: true, value: await transaction.write(request.batch) });
        return true;
      case 'delete':
        send({ ok: true, value: await transaction.delete(request.batch) });
        return true;
      case 'commit': {
        await transaction.commit((step) => send({ step }));
        send({ ok: true });
        // The importer samples the changed lists on another connection meanwhile.
        sqlite.pragma('wal_checkpoint(PASSIVE)');
        break;
      }
      case 'rollback':
        await transaction.rollback();
        break;
    }
    await handle.close();
    send({ ok: true });
  } catch (error) {
    await transaction.rollback().catch(() => {});
    await handle.close();
    send(failure(error));
  }
  return false;
}

try {
  // This connection is the import's alone: a first load may leave references to the importer.
  const transaction = await beginImport(handle, changes, true);
  send({ ok: true });
  // Requests are answered one after another, in the order they came; those that came after
  // the transaction ended (the main thread sends the next batch before the last is written)
  // are refused.
  let queue = Promise.resolve(true);
  port.on('message', (request: WriterRequest) => {
    queue = queue.then((open) => {
      if (open) return answer(transaction, request);
      send(failure(new Error("the import's transaction has ended")));
      return false;
    });
  });
} catch (error) {
  await handle.close();
  send(failure(error));
}
