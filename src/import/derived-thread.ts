import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFileAgain, type SqliteFile } from '../db/connect.ts';
import { type PostedError, postedError } from '../threads.ts';
import { type DerivedThreadMessage, refreshDerived } from './derived.ts';

/** The thread of `refreshDerivedOnThread`: its own connection to the file, one run, then it stops. */
const port = parentPort;
if (!port) throw new Error('derived-thread.ts runs as a worker thread');
const send = (message: DerivedThreadMessage) => port.postMessage(message);
const handle = openSqliteFileAgain(workerData as SqliteFile);
let error: PostedError | undefined;
try {
  await refreshDerived(handle, send);
} catch (failure) {
  error = postedError(failure);
} finally {
  await handle.close();
}
send({ done: true, ...(error === undefined ? {} : { error }) });
