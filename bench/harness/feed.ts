import { createReadStream, writeFileSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { PreparedDatabase } from './database.ts';
import { onInterrupt } from './interrupt.ts';
import { LARGE_COMPANY_ID } from './parameters.ts';
import { runCliMeasured, startService } from './processes.ts';
import { createKey, serviceEnv } from './service.ts';

/** One page of the feed as it was read: how long it took, and the resource of its first entry. */
export interface FeedPageTime {
  ms: number;
  resource: string | null;
}

interface FeedLatency {
  p50: number;
  p99: number;
  max: number;
}

/** What reading the large company's whole change feed cost, page by page. */
export interface FeedRun {
  entries: number;
  requests: number;
  seconds: number;
  entriesPerSecond: number;
  /** Per request of `limit` entries: every request a distinct URL (its cursor). */
  latencyMs: FeedLatency;
  /**
   * The pages by the resource of their first entry: the feed holds an import's records one
   * resource after another, so a page is mostly of that resource (expenses, with their items and
   * receipts, cost more than leaves).
   */
  byResource: Record<string, FeedLatency & { pages: number }>;
  /** The five slowest pages, by number (1: the first after the service started): where to look. */
  slowest: { ms: number; page: number; resource: string | null }[];
  /**
   * The load generator's own garbage collections that fell inside the pages' timing (its
   * collections are forced between pages when the bench runs with --expose-gc, as
   * `npm run bench` does; `forcedEveryPages` is null without, `forcedSeconds` their time, left
   * out of `seconds`): how many, their time, and the number of pages they fell in.
   */
  loadGeneratorGc: { forcedEveryPages: number | null; forcedSeconds: number } & CollectionsInside;
}

/** Importing a file that deletes 1 % of the large company's leaves and expenses, then one that brings them back. */
export interface DeleteRun {
  deletes: number;
  deleteSeconds: number;
  deletesPerSecond: number;
  deletePeakRssBytes: number | null;
  restored: number;
  restoreSeconds: number;
  restoredPerSecond: number;
}

const FEED_LIMIT = 1000;

/**
 * How often the load generator collects its garbage between pages. Each page's body (1.3 MB)
 * and its parsed entries are garbage by the next page; left to itself, the process collected
 * inside the pages' timing 229–231 times in PostgreSQL's read of 2,021 pages (2.0–2.2 s in
 * 153–156 pages), counted as the service's time; collecting every 5th page leaves 42–46 (0.3 s in
 * 21–24 pages). The pages' p99 did not move (73.7 and 87.8 ms without, 74.3 and 80.1 with): the
 * slow pages are the service's.
 */
const COLLECT_EVERY_PAGES = 5;

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;

function latencyOf(times: number[]): FeedLatency {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
}

/** The figures of a feed read from its pages' times, in the order they were read. */
export function feedFigures(
  pages: readonly FeedPageTime[],
): Pick<FeedRun, 'latencyMs' | 'byResource' | 'slowest'> {
  const grouped = new Map<string, number[]>();
  for (const { ms, resource } of pages) {
    const name = resource ?? 'empty';
    const times = grouped.get(name);
    if (times) times.push(ms);
    else grouped.set(name, [ms]);
  }
  const byResource: FeedRun['byResource'] = {};
  for (const [resource, times] of grouped) {
    byResource[resource] = { pages: times.length, ...latencyOf(times) };
  }
  const slowest = pages
    .map(({ ms, resource }, index) => ({ ms, page: index + 1, resource }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 5);
  return { latencyMs: latencyOf(pages.map((page) => page.ms)), byResource, slowest };
}

/**
 * Reads the large company's feed from the beginning at limit=1000 until has_more is false, one
 * request at a time (as a client bootstraps), on a service of its own with the response cache
 * off: no URL repeats, so nothing is answered from a cache.
 */
export async function runFeed(database: PreparedDatabase): Promise<FeedRun> {
  const key = await createKey(database, LARGE_COMPANY_ID, 'feed');
  const service = await startService({ ...serviceEnv(database), RESPONSE_CACHE_MB: '0' });
  const collectGarbage = (globalThis as { gc?: () => void }).gc;
  const collections: Timing[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry);
  });
  observer.observe({ entryTypes: ['gc'] });
  const pages: FeedPageTime[] = [];
  const timings: Timing[] = [];
  let entries = 0;
  let collecting = 0;
  const started = performance.now();
  try {
    let after: string | null = null;
    for (;;) {
      if (collectGarbage && pages.length % COLLECT_EVERY_PAGES === 0) {
        const before = performance.now();
        collectGarbage();
        collecting += performance.now() - before;
      }
      const url = `${service.baseUrl}/changes?limit=${FEED_LIMIT}${after ? `&after=${after}` : ''}`;
      const start = performance.now();
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' },
      });
      const body = await response.text();
      const ms = performance.now() - start;
      if (response.status !== 200)
        throw new Error(`GET ${url} answered ${response.status}: ${body}`);
      const page = JSON.parse(body) as {
        data: { resource: string }[];
        meta: { next_cursor: string; has_more: boolean };
      };
      pages.push({ ms, resource: page.data[0]?.resource ?? null });
      timings.push({ startTime: start, duration: ms });
      entries += page.data.length;
      after = page.meta.next_cursor;
      if (!page.meta.has_more) break;
    }
  } finally {
    collections.push(...observer.takeRecords());
    observer.disconnect();
    await service.stop();
  }
  // The read's time, as a client reading the feed would spend it: without the forced collections.
  const seconds = (performance.now() - started - collecting) / 1000;
  return {
    entries,
    requests: pages.length,
    seconds,
    entriesPerSecond: entries / seconds,
    ...feedFigures(pages),
    loadGeneratorGc: {
      forcedEveryPages: collectGarbage ? COLLECT_EVERY_PAGES : null,
      forcedSeconds: collecting / 1000,
      ...collectionsInside(collections, timings),
    },
  };
}

interface CollectionsInside {
  collections: number;
  ms: number;
  pages: number;
}

/** A span of time on `performance.now()`'s clock. */
interface Timing {
  startTime: number;
  duration: number;
}

/** The collections that overlap the pages' timings (both in the order they happened). */
export function collectionsInside(
  collections: readonly Timing[],
  pages: readonly Timing[],
): CollectionsInside {
  const hit = new Set<number>();
  let count = 0;
  let ms = 0;
  let page = 0;
  for (const { startTime, duration } of collections) {
    const end = startTime + duration;
    while (page < pages.length && pageEnd(pages[page] as Timing) <= startTime) page++;
    let overlapped = false;
    for (let i = page; i < pages.length && (pages[i] as Timing).startTime < end; i++) {
      const timing = pages[i] as Timing;
      ms += Math.min(end, pageEnd(timing)) - Math.max(startTime, timing.startTime);
      hit.add(i);
      overlapped = true;
    }
    if (overlapped) count++;
  }
  return { collections: count, ms, pages: hit.size };
}

const pageEnd = (timing: Timing) => timing.startTime + timing.duration;

/**
 * Every hundredth of the large company's leaves and expenses in the data file, by id: 1 % of
 * them. Taken from the file, not the database, so the file that brings them back holds every
 * record deleted, even when the database reused was imported from another file.
 */
async function everyHundredth(dataFile: string): Promise<{ leaves: number[]; expenses: number[] }> {
  const leaves: number[] = [];
  const expenses: number[] = [];
  for await (const record of largeCompanyRecords(dataFile)) {
    (record.type === 'leave' ? leaves : expenses).push(record.id);
  }
  const hundredth = (ids: number[]) => ids.sort((a, b) => a - b).filter((_, i) => i % 100 === 0);
  return { leaves: hundredth(leaves), expenses: hundredth(expenses) };
}

/** The large company's leave and expense lines of `dataFile`, parsed. */
async function* largeCompanyRecords(
  dataFile: string,
): AsyncGenerator<{ type: string; id: number; line: string }> {
  for await (const line of createInterface({ input: createReadStream(dataFile) })) {
    if (!line.startsWith('{"type":"leave"') && !line.startsWith('{"type":"expense"')) continue;
    const record = JSON.parse(line) as { type: string; company_id: number; id: number };
    if (record.company_id === LARGE_COMPANY_ID) yield { type: record.type, id: record.id, line };
  }
}

/** The lines of `dataFile` that hold those records, to bring them back. */
async function originalLines(dataFile: string, wanted: { leaves: number[]; expenses: number[] }) {
  const leaves = new Set(wanted.leaves);
  const expenses = new Set(wanted.expenses);
  const lines: string[] = [];
  for await (const { type, id, line } of largeCompanyRecords(dataFile)) {
    // A copy: the line itself is a slice of the chunk readline split it from, and keeps the
    // whole chunk alive. Kept as they come, the 20,000 lines held most of the file's text in
    // this process's heap (2.1 GB), whose first full garbage collection afterwards, 0.3 s,
    // fell inside a page of the next database's feed read.
    if ((type === 'leave' ? leaves : expenses).has(id)) lines.push(Buffer.from(line).toString());
  }
  return lines;
}

/**
 * Times `cdapi import` of a file that deletes 1 % of the large company's leaves and expenses,
 * then of one that imports them again (so the bench database holds the data file's records
 * again afterwards, with new change numbers). Both files are written beside the data
 * (`bench-data/NAME-ENGINE-deletes.ndjson`, `…-restore.ndjson`) and kept, to be read.
 */
export async function runDeletes(dataFile: string, database: PreparedDatabase): Promise<DeleteRun> {
  const wanted = await everyHundredth(dataFile);
  const stem = resolve('bench-data', `${basename(dataFile, extname(dataFile))}-${database.engine}`);
  const restore = await originalLines(dataFile, wanted);
  const deletes = [
    ...wanted.leaves.map((id) => ({ resource: 'leave', id })),
    ...wanted.expenses.map((id) => ({ resource: 'expense', id })),
  ].map(({ resource, id }) =>
    JSON.stringify({ type: 'delete', resource, company_id: LARGE_COMPANY_ID, id }),
  );
  writeFileSync(`${stem}-deletes.ndjson`, `${deletes.join('\n')}\n`);
  writeFileSync(`${stem}-restore.ndjson`, `${restore.join('\n')}\n`);
  // Stopped between the two, the database lacks the 1 %: the cold mix would measure less data.
  const forget = onInterrupt(() => {
    process.stderr.write(
      `bench: stopped before the records deleted were brought back: import ${stem}-restore.ndjson into ${database.label} (cdapi import), or drop the database\n`,
    );
  });
  const deleted = await runCliMeasured(
    ['import', '--json', `${stem}-deletes.ndjson`],
    database.env,
  );
  const restored = await runCliMeasured(
    ['import', '--json', `${stem}-restore.ndjson`],
    database.env,
  );
  forget();
  // The delete file's figures are those of deletions only if the database held the records.
  const absent = Object.values(
    (JSON.parse(deleted.stdout) as { absent_deletes: Record<string, number> }).absent_deletes,
  ).reduce((sum, count) => sum + count, 0);
  if (absent > 0) {
    throw new Error(
      `${absent} of the ${deletes.length} deletions found no record: the database reused (${database.label}) does not hold all of ${dataFile}'s records (an earlier run stopped before bringing its deletions back?); they have been imported from the file now, but this run's figures are not this data's`,
    );
  }
  return {
    deletes: deletes.length,
    deleteSeconds: deleted.seconds,
    deletesPerSecond: deletes.length / deleted.seconds,
    deletePeakRssBytes: deleted.peakRssBytes,
    restored: restore.length,
    restoreSeconds: restored.seconds,
    restoredPerSecond: restore.length / restored.seconds,
  };
}
