import { workerData } from 'node:worker_threads';
import { withSqliteFileAgain } from '../db/connect.ts';
import { answerOnce } from '../threads.ts';
import { type PurgeThreadData, purgeRows } from './purge.ts';

/**
 * The thread that deletes a company's rows from a SQLite file (see `purgeCompany`): it opens a
 * connection of its own, runs `purgeRows`, answers once and stops.
 */
const { companyId, ...file } = workerData as PurgeThreadData;
await answerOnce(() => withSqliteFileAgain(file, (handle) => purgeRows(handle, companyId)));
