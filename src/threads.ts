import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  MessageChannel,
  type MessagePort,
  parentPort,
  type ResourceLimits,
  Worker,
} from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` beside the module at `besideUrl` (pass
 * `import.meta.url`): `name.js` when built. From the sources, a Node that strips types itself
 * (22.18 and later, 24) loads `name.ts` as it is; on an older one, or under node_modules where
 * Node strips nothing, the process runs through tsx (bin/cdapi.js), whose loader a worker does
 * not inherit, so the thread registers it first.
 */
function startModuleThread(besideUrl: string, name: string, resourceLimits?: ResourceLimits) {
  const extension = extname(fileURLToPath(besideUrl));
  const entry = new URL(`./${name}${extension}`, besideUrl);
  const options = resourceLimits === undefined ? {} : { resourceLimits };
  const nativeTypeScript =
    process.features.typescript && !entry.pathname.includes('/node_modules/');
  if (extension !== '.ts' || nativeTypeScript) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), options);
}

/**
 * An error as a thread posts it to the thread that started it: its message, and its code when
 * it has one (a SQLITE_BUSY decides the API's 503 with Retry-After; without it, a 500).
 */
export interface PostedError {
  message: string;
  code?: string;
}

export function postedError(error: unknown): PostedError {
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  return {
    message: typeof message === 'string' ? message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/** The error a thread posted, as an Error of this thread with the same message and code. */
export const errorFromThread = ({ message, code }: PostedError): Error =>
  Object.assign(new Error(message), code === undefined ? {} : { code });

/** How a job's end travels, last on its channel: its value, or its error with the error's code. */
type JobEnd<T> = { jobEnd: { ok: true; value: T } | ({ ok: false } & PostedError) };

/** What a thread of the pool is sent for each job: its data, and the job's own channel. */
interface JobStart {
  data: unknown;
  port: MessagePort;
}

/**
 * The body of a thread module run by `runOnThread`: runs `run` for each job the thread is given,
 * one at a time, and ends the job with `run`'s value or error. `port` is the job's own channel
 * (`post` and `onMessage` of its `ThreadJob`): nothing of an earlier job arrives there, and it
 * is closed when the job ends. `run` must leave nothing else open behind it (a connection): the
 * thread is given other jobs after it.
 */
export function serveJobs<Data, Value>(
  run: (data: Data, port: MessagePort) => Promise<Value> | Value,
): void {
  const parent = parentPort;
  if (!parent) throw new Error('serveJobs runs in a worker thread');
  parent.on('message', async ({ data, port }: JobStart) => {
    let end: JobEnd<Value>;
    try {
      end = { jobEnd: { ok: true, value: await run(data as Data, port) } };
    } catch (error) {
      end = { jobEnd: { ok: false, ...postedError(error) } };
    }
    port.postMessage(end);
    port.close();
  });
}

/** A job `runOnThread` gave a thread. */
export interface ThreadJob<Value> {
  /** Posts `message` to the job (its `port` in `serveJobs`). */
  post(message: unknown): void;
  /**
   * The job's value, once everything it posted before has reached `onMessage`; its error, with
   * the error's code; or the thread's stopping first (an uncaught error, a heap limit reached).
   */
  readonly result: Promise<Value>;
}

export interface ThreadJobOptions {
  /** Hears each message the job posts, in order. */
  onMessage?: (message: never) => void;
  /** The thread's heap limits (threads with other limits are other threads). */
  resourceLimits?: ResourceLimits;
}

/**
 * How long a thread that finished a job waits for the next before it ends. Starting one costs
 * ~250 ms of CPU on Node 24 and ~450 ms on Node 22 (it loads Kysely and the modules the job
 * needs); an admin import used three (writer, samples, checkpoint) and a test of imports
 * dozens. An idle thread keeps its heap (~10 MB of RSS), so it does not wait long.
 */
export const THREAD_IDLE_MS = 5000;

interface PooledThread {
  readonly worker: Worker;
  readonly pool: PooledThread[];
  idleTimer?: NodeJS.Timeout;
  /** Ends the job the thread runs, as its stopping does. */
  failJob?: (error: Error) => void;
}

/** Idle threads, by module and heap limits: the thread last idle is taken first. */
const idleThreads = new Map<string, PooledThread[]>();

/** A thread for a job: the one of that module and heap limits idle last, or a new one. */
function threadForJob(besideUrl: string, name: string, resourceLimits?: ResourceLimits) {
  const key = JSON.stringify([new URL(name, besideUrl).href, resourceLimits ?? null]);
  let pool = idleThreads.get(key);
  if (!pool) {
    pool = [];
    idleThreads.set(key, pool);
  }
  const idle = pool.at(-1);
  if (idle) {
    leavePool(idle);
    return idle;
  }
  const thread: PooledThread = { worker: startModuleThread(besideUrl, name, resourceLimits), pool };
  const stopped = (error: Error) => {
    leavePool(thread);
    thread.failJob?.(error);
  };
  thread.worker.on('error', stopped);
  thread.worker.on('exit', (code) =>
    stopped(new Error(`the worker thread of ${name} stopped (exit code ${code})`)),
  );
  return thread;
}

/** Takes an idle thread out of its pool (nothing if it is not there), its idle time with it. */
function leavePool(thread: PooledThread): void {
  clearTimeout(thread.idleTimer);
  const at = thread.pool.indexOf(thread);
  if (at >= 0) thread.pool.splice(at, 1);
}

function release(thread: PooledThread): void {
  thread.failJob = undefined;
  // An idle thread does not keep the process alive.
  thread.worker.unref();
  thread.idleTimer = setTimeout(() => {
    // Out of the pool first: it takes a while to end, and must not be given a job meanwhile.
    leavePool(thread);
    void thread.worker.terminate();
  }, THREAD_IDLE_MS);
  thread.idleTimer.unref();
  thread.pool.push(thread);
}

/**
 * Runs a job on a thread of the module `name` beside the module at `besideUrl` (pass
 * `import.meta.url`; the module calls `serveJobs`): a thread of that module left idle by an
 * earlier job, or a new one. Each job has a channel of its own, so no message crosses from one
 * job to the next. A thread whose job ends is kept THREAD_IDLE_MS for the next; one that stops
 * (an uncaught error, a heap limit) is not used again.
 */
export function runOnThread<Value>(
  besideUrl: string,
  name: string,
  data: unknown,
  { onMessage, resourceLimits }: ThreadJobOptions = {},
): ThreadJob<Value> {
  const thread = threadForJob(besideUrl, name, resourceLimits);
  const { port1: port, port2: threadPort } = new MessageChannel();
  const result = new Promise<Value>((resolve, reject) => {
    thread.failJob = (error) => {
      thread.failJob = undefined;
      port.close();
      reject(error);
    };
    port.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null || !('jobEnd' in message)) {
        onMessage?.(message as never);
        return;
      }
      const { jobEnd } = message as JobEnd<Value>;
      port.close();
      release(thread);
      if (jobEnd.ok) resolve(jobEnd.value);
      else reject(errorFromThread(jobEnd));
    });
  });
  thread.worker.ref();
  const start: JobStart = { data, port: threadPort };
  thread.worker.postMessage(start, [threadPort]);
  return { post: (message) => port.postMessage(message), result };
}
