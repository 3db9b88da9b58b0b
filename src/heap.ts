import { setFlagsFromString } from 'node:v8';

/** How far past what the last full collection kept V8 may grow the service's heap, in %. */
export const SERVICE_HEAP_GROWTH_PERCENT = 50;

/**
 * Keeps the service's heap near what it holds. When full collections are cheap, as they are
 * under load, V8 lets the old generation grow to up to four times what the last one kept
 * before it collects again: with ~45 MB live, runs of the same benchmark peaked anywhere from
 * 251 to 350 MB of RSS. Growing by half at most kept them near 200 MB at the same
 * throughput (docs/performance.md). V8 reads the setting whenever it sets the next limit, so
 * setting it at start is enough; `node --heap-growing-percent=N` given by the operator wins.
 */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${SERVICE_HEAP_GROWTH_PERCENT}`);
}
