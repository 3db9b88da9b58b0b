import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` beside the module at `besideUrl` (pass
 * `import.meta.url`): `name.js` when built. From the sources (bin/cdapi.js and the tests run
 * TypeScript through tsx) a worker does not inherit tsx's loader, so the thread registers it
 * before it loads `name.ts`.
 */
export function startModuleThread(besideUrl: string, name: string, options: WorkerOptions): Worker {
  const extension = extname(fileURLToPath(besideUrl));
  const entry = new URL(`./${name}${extension}`, besideUrl);
  if (extension !== '.ts') return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), options);
}
