import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` beside the module at `besideUrl` (pass
 * `import.meta.url`): `name.js` when built. From the sources, a Node that strips types itself
 * (22.18 and later, 24) loads `name.ts` as it is; on an older one, or under node_modules where
 * Node strips nothing, the process runs through tsx (bin/cdapi.js), whose loader a worker does
 * not inherit, so the thread registers it first.
 */
export function startModuleThread(besideUrl: string, name: string, options: WorkerOptions): Worker {
  const extension = extname(fileURLToPath(besideUrl));
  const entry = new URL(`./${name}${extension}`, besideUrl);
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

/** The one message of a thread that answers once: its value, or its error with the error's code. */
type ThreadAnswer<T> = { ok: true; value: T } | ({ ok: false } & PostedError);

/**
 * In a thread that answers once: posts `run`'s value, or its error with the error's code, as
 * `answerOf` reads them in the thread that started it.
 */
export async function answerOnce<T>(run: () => Promise<T> | T): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('answerOnce runs in a worker thread');
  let answer: ThreadAnswer<T>;
  try {
    answer = { ok: true, value: await run() };
  } catch (error) {
    answer = { ok: false, ...postedError(error) };
  }
  port.postMessage(answer);
}

/** What a thread that answers once sends: the value it posts, its error, or its stopping first. */
export function answerOf<T>(worker: Worker, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    worker.once('message', (answer: ThreadAnswer<T>) => {
      if (answer.ok) resolve(answer.value);
      // The code (SQLITE_BUSY: another writer holds the file) decides the API's answer.
      else reject(errorFromThread(answer));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${what} stopped (${code})`)));
  });
}
