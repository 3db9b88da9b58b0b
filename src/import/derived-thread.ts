import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/connect.ts';
import { type DerivedThreadMessage, refreshDerived } from './derived.ts';

/** The thread of `refreshDerivedOnThread`: its own connection to the file, one run, then it stops. */
const port = parentPort;
if (!port) throw new Error('derived-thread.ts runs as a worker thread');
const send = (message: DerivedThreadMessage) => port.postMessage(message);
const handle = openDatabase({ dialect: 'sqlite', path: (workerData as { path: string }).path });
let error: string | undefined;
try {
  await refreshDerived(handle, send);
} catch (failure) {
  error = failure instanceof Error ? failure.message : String(failure);
} finally {
  await handle.close();
}
send({ done: true, ...(error === undefined ? {} : { error }) });
