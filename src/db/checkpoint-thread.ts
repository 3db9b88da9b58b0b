import { workerData } from 'node:worker_threads';
import { answerOnce } from '../threads.ts';
import { type SqliteFile, withSqliteFileAgain } from './connect.ts';
import { truncateWriteAheadLog } from './erasure.ts';

/**
 * The thread of `truncateWriteAheadLogOnThread`: its own connection to the file, one
 * checkpoint, one answer, then it stops.
 */
await answerOnce(() => withSqliteFileAgain(workerData as SqliteFile, truncateWriteAheadLog));
