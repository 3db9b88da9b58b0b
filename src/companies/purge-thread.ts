import { withSqliteFileAgain } from '../db/connect.ts';
import { serveJobs } from '../threads.ts';
import { type PurgeThreadData, purgeRows } from './purge.ts';

/**
 * The threads that delete a company's rows from a SQLite file (see `purgeCompany`): each job
 * opens a connection of its own and runs `purgeRows`.
 */
serveJobs(({ companyId, ...file }: PurgeThreadData) =>
  withSqliteFileAgain(file, (handle) => purgeRows(handle, companyId)),
);
