import { withSqliteFileAgain } from '../db/connect.ts';
import { refreshListSamples } from '../db/list-samples-refresh.ts';
import { serveJobs } from '../threads.ts';
import { type DerivedJob, refreshStatistics } from './derived.ts';

/** The threads of `refreshDerived`: each job one step, on a connection of its own to the file. */
serveJobs((job: DerivedJob) =>
  withSqliteFileAgain(job.file, (handle) =>
    'samplesOf' in job ? refreshListSamples(handle, [job.samplesOf]) : refreshStatistics(handle),
  ),
);
