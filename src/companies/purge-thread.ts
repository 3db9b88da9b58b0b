import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFileAgain } from '../db/connect.ts';
import { postedError } from '../threads.ts';
import { type PurgeThreadData, type PurgeThreadReply, purgeRows } from './purge.ts';

/**
 * The thread that deletes a company's rows from a SQLite file (see `purgeCompany`): it opens a
 * connection of its own, runs `purgeRows`, answers once and stops.
 */
const port = parentPort;
if (!port) throw new Error('purge-thread.ts runs as a worker thread');
const { companyId, ...file } = workerData as PurgeThreadData;
const handle = openSqliteFileAgain(file);
let reply: PurgeThreadReply;
try {
  reply = { ok: true, purged: await purgeRows(handle, companyId) };
} catch (error) {
  reply = { ok: false, ...postedError(error) };
} finally {
  await handle.close();
}
port.postMessage(reply);
