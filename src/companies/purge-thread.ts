import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/connect.ts';
import { type PurgeThreadData, type PurgeThreadReply, purgeRows } from './purge.ts';

/**
 * The thread that deletes a company's rows from a SQLite file (see `purgeCompany`): it opens a
 * connection of its own, runs `purgeRows`, answers once and stops.
 */
const port = parentPort;
if (!port) throw new Error('purge-thread.ts runs as a worker thread');
const { path, companyId, busyTimeoutMs } = workerData as PurgeThreadData;
const handle = openDatabase({ dialect: 'sqlite', path }, { statementTimeoutMs: busyTimeoutMs });
let reply: PurgeThreadReply;
try {
  reply = { ok: true, purged: await purgeRows(handle, companyId) };
} catch (error) {
  const { message, code } = error as { message?: unknown; code?: unknown };
  reply = {
    ok: false,
    message: String(message ?? error),
    ...(typeof code === 'string' ? { code } : {}),
  };
} finally {
  await handle.close();
}
port.postMessage(reply);
