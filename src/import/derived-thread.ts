import { type SqliteFile, withSqliteFileAgain } from '../db/connect.ts';
import { serveJobs } from '../threads.ts';
import { refreshDerived } from './derived.ts';

/** The threads of `refreshDerivedOnThread`: each job its own connection to the file, each step posted as it starts. */
serveJobs((file: SqliteFile, port) =>
  withSqliteFileAgain(file, (handle) => refreshDerived(handle, (step) => port.postMessage(step))),
);
