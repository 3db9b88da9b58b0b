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
