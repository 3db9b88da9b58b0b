import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/connect.ts';
import { type PostedError, postedError } from '../threads.ts';
import { type DerivedThreadData, type DerivedThreadMessage, refreshDerived } from './derived.ts';

/** The thread of `refreshDerivedOnThread`: its own connection to the file, one run, then it stops. */
const port = parentPort;
if (!port) throw new Error('derived-thread.ts runs as a worker thread');
const send = (message: DerivedThreadMessage) => port.postMessage(message);
const { path, busyTimeoutMs } = workerData as DerivedThreadData;
const handle = openDatabase({ dialect: 'sqlite', path }, { statementTimeoutMs: busyTimeoutMs });
let error: PostedError | undefined;
try {
  await refreshDerived(handle, send);
} catch (failure) {
  error = postedError(failure);
} finally {
  await handle.close();
}
send({ done: true, ...(error === undefined ? {} : { error }) });
