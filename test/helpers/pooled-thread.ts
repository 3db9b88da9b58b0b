import { threadId } from 'node:worker_threads';
import { serveJobs } from '../../src/threads.ts';

/** The jobs of the thread module test/threads.test.ts runs with `runOnThread`. */
export type PooledThreadJob =
  /** Its value is the thread's id. */
  | { op: 'id' }
  /** Posts 0, 1, … count - 1, then its value is the thread's id. */
  | { op: 'post'; count: number }
  /** Its value is the first message the job is sent. */
  | { op: 'echo' }
  | { op: 'fail' }
  /** Ends the thread mid-job. */
  | { op: 'stop' }
  /** Its value is the thread's id; the thread ends a moment later, idle. */
  | { op: 'stop-after' };

serveJobs(async (job: PooledThreadJob, port) => {
  switch (job.op) {
    case 'id':
      return threadId;
    case 'post':
      for (let i = 0; i < job.count; i += 1) port.postMessage(i);
      return threadId;
    case 'echo':
      return await new Promise((resolve) => port.once('message', resolve));
    case 'fail':
      throw Object.assign(new Error('refused by the job'), { code: 'E_REFUSED' });
    case 'stop':
      return process.exit(3);
    case 'stop-after':
      setTimeout(() => process.exit(4), 10);
      return threadId;
  }
});
