import { parentPort, workerData } from 'node:worker_threads';
import { postedError, type ThreadAnswer } from '../threads.ts';
import { openSqliteFileAgain, type SqliteFile } from './connect.ts';
import { truncateWriteAheadLog } from './erasure.ts';

/**
 * The thread of `truncateWriteAheadLogOnThread`: its own connection to the file, one
 * checkpoint, one answer, then it stops.
 */
const port = parentPort;
if (!port) throw new Error('checkpoint-thread.ts runs as a worker thread');
const handle = openSqliteFileAgain(workerData as SqliteFile);
let reply: ThreadAnswer<boolean>;
try {
  reply = { ok: true, value: truncateWriteAheadLog(handle) };
} catch (error) {
  reply = { ok: false, ...postedError(error) };
} finally {
  await handle.close();
}
port.postMessage(reply);
