import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFileAgain } from '../db/connect.ts';
import { postedError, type ThreadAnswer } from '../threads.ts';
import { type PurgedRows, type PurgeThreadData, purgeRows } from './purge.ts';

/**
 * The thread that deletes a company's rows from a SQLite file (see `purgeCompany`): it opens a
 * connection of its own, runs `purgeRows`, answers once and stops.
 */
const port = parentPort;
if (!port) throw new Error('purge-thread.ts runs as a worker thread');
const { companyId, ...file } = workerData as PurgeThreadData;
const handle = openSqliteFileAgain(file);
let reply: ThreadAnswer<PurgedRows | null>;
try {
  reply = { ok: true, value: await purgeRows(handle, companyId) };
} catch (error) {
  reply = { ok: false, ...postedError(error) };
} finally {
  await handle.close();
}
port.postMessage(reply);
