import { serveJobs } from '../threads.ts';
import { type SqliteFile, withSqliteFileAgain } from './connect.ts';
import { truncateWriteAheadLog } from './erasure.ts';

/** The threads of `truncateWriteAheadLogOnThread`: each job its own connection to the file, one checkpoint. */
serveJobs((file: SqliteFile) => withSqliteFileAgain(file, truncateWriteAheadLog));
