import { setFlagsFromString } from 'node:v8';

/** How far past what the last full collection kept V8 may grow the heap, in percent. */
export const HEAP_GROWTH_PERCENT = 50;

/**
 * Keeps the process's heap near what it holds; the CLI sets it for every command. When full
 * collections are cheap, as they are under load or in a large import, V8 lets the old
 * generation grow to up to four times what the last one kept before it collects again. With
 * ~45 MB live, runs of the same benchmark left the service anywhere from 251 to 350 MB of RSS,
 * and the large bench import at 257–272 MB. Growing by half at most kept the service near
 * 210–260 MB and the import near 236 MB at the same speed (docs/performance.md, item 19).
 * V8 reads the setting whenever it sets the next limit, so setting it at start is enough; a
 * `node --heap-growing-percent=N` the operator gives wins.
 */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWTH_PERCENT}`);
}

/**
 * Turns off V8's allocation-site pretenuring for the rest of the process; `cdapi import` calls it
 * before it reads (not `serve`: the cold mix ran as fast either way, 448–474 req/s against
 * 467–468). V8 allocates straight into the old generation the objects of a site whose objects
 * mostly outlived a young collection. The import's parsed records and the rows made of them
 * live until their batch is posted to the writer, then die: once their sites were pretenured,
 * the old generation filled with them every ~80 ms, past the growth HEAP_GROWTH_PERCENT allows,
 * and the reading thread, which bounds the import while the rows stream, ran 118–141 full
 * collections (2.0–2.5 s of pauses and incremental marking) against 24–26 (0.7 s) without. The
 * large bench file then streamed in 20–30 s rather than 23–34 (docs/performance.md, item 100).
 * A `node --allocation-site-pretenuring` the operator gives wins. Whether it set the flag.
 */
export function stopPretenuring(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--(no-)?allocation[-_]site[-_]pretenuring$/.test(arg))) return false;
  setFlagsFromString('--no-allocation-site-pretenuring');
  return true;
}

/**
 * The node option `cdapi serve` runs with: Node 24's V8 lets each thread's young generation
 * grow to 32 MB semi-spaces, which took the service's peak under the benchmark's cold mix from
 * ~300 to ~400 MB; 4 MB ones keep it under 300 MB at the same throughput.
 */
export const SERVICE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=4'];
/**
 * The environment `cdapi serve` runs with: glibc's malloc gives each thread that allocates (the
 * event loop, the SQLite reader threads, V8's and libuv's helpers) an arena of its own; two
 * took the service's peak under the cold mix from 305–309 to 290–296 MB at the same throughput.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

const SEMI_SPACE_OPTION = /(?:^|\s)--max[-_]semi[-_]space[-_]size(?:[=\s]|$)/;

/**
 * Makes `cdapi serve` run with SERVICE_NODE_OPTIONS and SERVICE_ENV however it was started
 * (`npm start`, `npx cdapi serve`, `node bin/cdapi.js serve`). Neither can be set from inside a
 * running process: V8 sizes the young generation, and glibc counts its arenas, when the process
 * starts. So a process started without them replaces itself (`process.execve`: the same PID,
 * the same streams; called once the configuration is checked, before the database is opened or
 * anything printed) with the same command and them added. A value the operator gives
 * (`node --max-semi-space-size=16`, in NODE_OPTIONS too, or `MALLOC_ARENA_MAX=4`) is kept. On
 * a Node without `process.execve` (before 22.15, or Windows), or with an IPC channel to its
 * parent, the service runs as started.
 */
export function restartWithServiceMemorySettings(): void {
  // The one reader of process.env outside config.ts: not configuration, the environment the
  // process passes on to its replacement whole.
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? ''];
  const addOptions = options.some((option) => SEMI_SPACE_OPTION.test(option))
    ? []
    : SERVICE_NODE_OPTIONS;
  const addEnv = Object.fromEntries(
    Object.entries(SERVICE_ENV).filter(([name]) => process.env[name] === undefined),
  );
  if (addOptions.length === 0 && Object.keys(addEnv).length === 0) return;
  // No other descriptor than the three standard streams survives the replacement: a process
  // with an IPC channel to its parent (a cluster worker, pm2's fork mode) would lose it.
  if (typeof process.execve !== 'function' || process.channel) return;
  try {
    process.execve(
      process.execPath,
      [process.execPath, ...addOptions, ...process.execArgv, ...process.argv.slice(1)],
      { ...process.env, ...addEnv },
    );
  } catch (error) {
    const settings = [...addOptions, ...Object.entries(addEnv).map(([k, v]) => `${k}=${v}`)];
    process.stderr.write(
      `cdapi: could not restart with ${settings.join(' ')} (${(error as Error).message}); serving without\n`,
    );
  }
}
