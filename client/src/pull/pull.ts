import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type Client, createClient } from '../client.ts';
import { ApiError } from '../errors.ts';
import type { Wait } from '../transport.ts';
import type { ChangesPage, Resource } from '../types.ts';
import { writeCsv } from './csv.ts';
import { makeDirectorySync, removeEmptyDirectoriesSync } from './directories.ts';
import { Mirror } from './mirror.ts';
import type { Progress } from './progress.ts';
import { syncReceipts } from './receipts.ts';

export interface PullOptions {
  baseUrl: string;
  apiKey: string;
  out: string;
  csvDir?: string | undefined;
  /** In the CSV files, text a spreadsheet would run as a formula begins with `'`. */
  csvEscapeFormulas?: boolean | undefined;
  receiptsDir?: string | undefined;
  /** Default: every resource the key may read. */
  resources?: Resource[] | undefined;
  /** Entries a page of the change feed (1–1000). */
  pageSize: number;
  /** Ask for compressed pages (false: faster on the same machine or a fast LAN). */
  compress: boolean;
  progress: Progress;
  signal?: AbortSignal | undefined;
}

/** The `--json` summary. */
export interface PullSummary {
  upserts: number;
  deletes: number;
  cursor: string | null;
  seconds: number;
}

/** The resources the feed sends to this key when `resources` is not given. */
function readableResources(scopes: readonly string[]): Resource[] {
  const resources: Resource[] = ['employee'];
  if (scopes.includes('leaves.read')) resources.push('leave_type', 'leave');
  if (scopes.includes('expenses.read')) resources.push('expense_category', 'expense');
  return resources;
}

type CallOptions = { signal?: AbortSignal | undefined };

/** Waits this long or longer are told on stderr, so a paused pull does not look hung. */
const NOTED_WAIT_MS = 2000;

function describeWait(wait: Wait): string {
  const seconds = Math.ceil(wait.ms / 1000);
  if (wait.reason === 'rate_limit')
    return `rate limit reached: waiting ${seconds} s for a free slot`;
  const cause =
    wait.status === undefined ? (wait.failure ?? 'network failure') : `answer ${wait.status}`;
  return `${cause}: retry ${wait.attempt} in ${seconds} s`;
}

/** How many records of each resource the service holds now, from a list's total. */
const COUNTERS: Record<Resource, (client: Client, call: CallOptions) => Promise<number>> = {
  employee: async (client, call) => (await client.employees.list({ per_page: 1 }, call)).meta.total,
  leave: async (client, call) => (await client.leaves.list({ per_page: 1 }, call)).meta.total,
  expense: async (client, call) => (await client.expenses.list({ per_page: 1 }, call)).meta.total,
  leave_type: async (client, call) => (await client.leaveTypes(call)).length,
  expense_category: async (client, call) => (await client.expenseCategories(call)).length,
};

/**
 * How many records a pull from the beginning reads (for the ETA). One call after another: the
 * pull paces itself by the answers, which concurrent calls would outrun.
 */
async function estimateRecords(
  client: Client,
  resources: Resource[],
  call: CallOptions,
): Promise<number> {
  let total = 0;
  for (const resource of resources) total += await COUNTERS[resource](client, call);
  return total;
}

/**
 * A base URL as the file records it and compares it: as the WHATWG URL parser writes it (scheme
 * and host in lower case, no default port), without trailing slashes; so `HTTP://Host:80/api/`
 * is the source `http://host/api` is.
 */
function sameBase(url: string): string {
  return (URL.parse(url)?.href ?? url).replace(/\/+$/, '');
}

/**
 * Refuses to mix two sources, two companies or two resource sets in one file. The resources are
 * the set read, given or the key's default (another key's scopes make another default); a file
 * of an earlier release recorded its default as an empty text, taken for the set read now.
 */
function claimFile(
  mirror: Mirror,
  expected: Record<'base_url' | 'company_id' | 'resources', string>,
  defaultResources: boolean,
) {
  for (const [name, value] of Object.entries(expected) as Array<[keyof typeof expected, string]>) {
    const stored = mirror.state(name);
    if (stored === null || (name === 'resources' && stored === '')) mirror.setState(name, value);
    else if ((name === 'base_url' ? sameBase(stored) : stored) !== value) {
      const why =
        name === 'resources' && defaultResources
          ? ' (without --resources, the resources the key may read)'
          : '';
      throw new Error(
        `the output file was pulled with ${name} ${stored}, not ${value}${why}: use another file`,
      );
    }
  }
}

/**
 * One run of cdapi-pull: reads the change feed from the cursor kept in the file (from the
 * beginning the first time) until it is caught up, committing each page with the cursor after
 * it; then receipts and CSV files when asked. The next page is fetched while one is written.
 */
export async function pull(options: PullOptions): Promise<PullSummary> {
  const startedAt = performance.now();
  // Made before the pull, so a folder that cannot be made fails the run before its longest part;
  // a run that fails removes those it made while they are still empty.
  const madeFolders: string[] = [];
  const removeMadeFolders = () => removeEmptyDirectoriesSync(madeFolders.splice(0));
  try {
    for (const [option, dir] of [
      ['--receipts', options.receiptsDir],
      ['--csv', options.csvDir],
    ] as const) {
      if (dir === undefined) continue;
      if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) {
        throw new Error(`${option} ${dir}: a file, not a folder: name a folder (made if missing)`);
      }
      try {
        madeFolders.push(...makeDirectorySync(dir));
      } catch (error) {
        throw new Error(`${option} ${dir}: cannot make the folder: ${(error as Error).message}`);
      }
      // Told now, not after the records are pulled, when its first file is written.
      if (!writable(dir, constants.W_OK | constants.X_OK)) {
        throw new Error(
          `${option} ${dir}: this user may not write in the folder (its permissions, or a read-only file system)`,
        );
      }
    }
  } catch (error) {
    removeMadeFolders();
    throw error;
  }
  const client = createClient({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    compress: options.compress,
    onWait: (wait) => {
      if (wait.ms >= NOTED_WAIT_MS) options.progress.note(describeWait(wait));
    },
  });
  const call = { signal: options.signal };
  refuseUnwritableOutput(options.out);
  const unlock = lockOutput(options.out);
  const created = !existsSync(options.out);
  let mirror: Mirror;
  try {
    refuseHardLinks(options.out);
    mirror = new Mirror(options.out);
  } catch (error) {
    unlock();
    removeMadeFolders();
    throw error;
  }
  let done = false;
  // A first run that failed before its first page (a wrong address or key, a service down, a
  // Ctrl-C) leaves no file behind; one that got further keeps it, and the next run resumes.
  const leaveNothingUnpulled = () => {
    const nothingPulled = mirror.state('cursor') === null;
    mirror.close();
    if (!done && created && nothingPulled) {
      // The file SQLite made, not a symbolic link to it that the user made beforehand.
      const file = realPath(options.out);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    }
    if (!done) removeMadeFolders();
    unlock();
  };
  onInterrupt.add(leaveNothingUnpulled);
  try {
    const me = await client.me(call).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) {
        const { status, code, errors, requestId } = error;
        throw new ApiError({
          status,
          code,
          errors,
          requestId,
          detail: `${error.detail} Is --base-url the API's base, ending in /api/company/v1 (${options.baseUrl})?`,
        });
      }
      throw error;
    });
    const resources = options.resources ?? readableResources(me.api_key.scopes);
    claimFile(
      mirror,
      {
        base_url: sameBase(options.baseUrl),
        company_id: String(me.company.id),
        resources: resources.join(','),
      },
      options.resources === undefined,
    );
    if (options.receiptsDir && !resources.includes('expense')) {
      throw new Error(
        `--receipts: this run does not read expenses (${options.resources === undefined ? 'the key lacks the expenses.read scope' : '--resources leaves them out'}), so it has no receipt to download`,
      );
    }
    mirror.hold(resources);
    let cursor = mirror.state('cursor');
    const estimate = cursor === null ? await estimateRecords(client, resources, call) : null;
    const fetchPage = (after: string | null): Promise<ChangesPage> => {
      const page = client.changes.list({ after, limit: options.pageSize, resources }, call);
      page.catch(() => {}); // awaited below; an unhandled rejection must not end the process first
      return page;
    };
    options.progress.start('records', estimate);
    let upserts = 0;
    let deletes = 0;
    let next = fetchPage(cursor);
    for (;;) {
      let page: ChangesPage;
      try {
        page = await next;
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'cursor_expired')) throw error;
        options.progress.note('the stored cursor has expired: pulling again from the beginning');
        mirror.reset();
        cursor = null;
        // The summary counts what this run leaves in the file: the pages before are pulled
        // again, and the progress counts them afresh, as the summary does.
        upserts = 0;
        deletes = 0;
        next = fetchPage(null);
        options.progress.start('records', await estimateRecords(client, resources, call));
        continue;
      }
      // An empty page that claims more would ask for the same page forever: take it as caught up.
      const more = page.meta.has_more && page.data.length > 0;
      if (more) next = fetchPage(page.meta.next_cursor);
      const applied = mirror.apply(page.data, page.meta.next_cursor);
      cursor = page.meta.next_cursor ?? cursor;
      upserts += applied.upserts;
      deletes += applied.deletes;
      // The records the file gained, changed or lost, as the estimate and the summary count them.
      options.progress.advance(applied.upserts + applied.deletes);
      if (!more) break;
    }
    options.progress.finish();
    if (mirror.erased) {
      options.progress.note(
        'rewriting the file, so that no trace of the rows it deleted (an erased employee, say) stays in it',
      );
      mirror.scrub();
    }
    if (options.receiptsDir)
      await syncReceipts(client, mirror, options.receiptsDir, options.progress, options.signal);
    if (options.csvDir) {
      writeCsv(mirror, options.csvDir, { escapeFormulas: options.csvEscapeFormulas });
    }
    done = true;
    return {
      upserts,
      deletes,
      cursor,
      seconds: Math.round((performance.now() - startedAt) / 10) / 100,
    };
  } finally {
    onInterrupt.delete(leaveNothingUnpulled);
    leaveNothingUnpulled();
  }
}

/**
 * One run at a time a file: `FILE.lock` holds the running one's process id and, on Linux, its
 * start time (a run that was killed leaves it, and the next takes it over once that process is
 * gone, or once its id belongs to a process started at another time). Two runs would both
 * write pages, and SQLite's own lock only tells one of them "database is locked" at some page.
 * The lock sits beside the file's real path, so a run through a symbolic link meets the lock of
 * a run through the file's own name. Where no lock file can be made (a folder that cannot be
 * written), the mirror's own open says why. Returns what releases it.
 */
function lockOutput(out: string): () => void {
  const path = `${realPath(out)}.lock`;
  const self = startTime(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${process.pid}${self === null ? '' : ` ${self}`}\n`, { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return () => {};
    }
    // Only a file a run made is read (a FIFO would block the read for good, a link lead
    // elsewhere) or taken over.
    const found = lstatSync(path, { throwIfNoEntry: false });
    if (found === undefined) continue; // released meanwhile
    if (!found.isFile()) {
      throw new Error(
        `${path} is ${kindOf(found)}, where cdapi-pull keeps the lock of ${out}: move it away, then run again`,
      );
    }
    let holder: string[];
    try {
      holder = readFileSync(path, 'utf8').trim().split(' ');
    } catch {
      continue; // released meanwhile
    }
    const pid = Number(holder[0]);
    if (Number.isSafeInteger(pid) && pid > 0 && isRunning(pid, holder[1])) {
      throw new Error(
        `another cdapi-pull (process ${pid}) is writing ${out}: let it finish, then run again`,
      );
    }
    rmSync(path, { force: true });
  }
  throw new Error(`cannot take ${path}: another cdapi-pull keeps making it`);
}

/** What a path that is not a regular file is, for a message. */
function kindOf(found: Stats): string {
  if (found.isDirectory()) return 'a folder';
  if (found.isSymbolicLink()) return 'a symbolic link';
  if (found.isFIFO()) return 'a named pipe';
  if (found.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * An output that is there but is no regular file (a device, such as /dev/null, a named pipe, a
 * socket), or that this user may not write, or in a folder it may not write, is refused before
 * anything is made beside it: SQLite said only "disk I/O error" or "attempt to write a readonly
 * database", and left its journal or write-ahead log beside it (`/dev/null-journal`). A folder
 * is named by `Mirror`.
 */
function refuseUnwritableOutput(out: string): void {
  const folder = dirname(realPath(out));
  if (existsSync(folder) && !writable(folder)) {
    throw new Error(
      `cannot open the output file ${out}: this user may not write in its folder ${folder}, where SQLite keeps its write-ahead log beside the file`,
    );
  }
  const found = statSync(out, { throwIfNoEntry: false });
  if (found === undefined || found.isDirectory()) return;
  if (!found.isFile()) {
    throw new Error(`cannot open the output file ${out}: it is ${kindOf(found)}, not a file`);
  }
  if (!writable(out)) {
    throw new Error(
      `cannot open the output file ${out}: this user may not write it (its permissions, or a read-only file system)`,
    );
  }
}

function writable(path: string, mode = constants.R_OK | constants.W_OK): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * A file with other names (hard links) is refused: SQLite keeps the write-ahead log and its
 * lock beside each name, so a run or reader through another name neither sees the pages this
 * run has not yet copied into the file nor is kept from writing at the same time (SQLite's
 * "How To Corrupt" lists it). Nor would the lock beside the name stop such a run.
 */
function refuseHardLinks(out: string): void {
  const info = statSync(out, { throwIfNoEntry: false });
  const names = info?.isFile() ? info.nlink : 1;
  if (names > 1) {
    throw new Error(
      `${out} has ${names} names (hard links): SQLite cannot keep one write-ahead log for them, and a run through another name would corrupt it; remove the other links (a symbolic link is fine)`,
    );
  }
}

/**
 * The file's real path: symbolic links resolved, a link to a file not made yet too (its target's
 * path), so every name of the file finds one lock. As given where its folder does not exist.
 */
function realPath(file: string): string {
  let path = file;
  for (let links = 0; links < 40; links++) {
    try {
      return realpathSync(path);
    } catch {
      // A link whose target does not exist yet: follow it by hand.
      const target = linkTarget(path);
      if (target === null) break;
      path = resolve(dirname(path), target);
    }
  }
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

function linkTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch {
    return null;
  }
}

/** When the process started (clock ticks since boot, from /proc); null where there is no /proc. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command's name, which is in parentheses and may hold spaces; the
    // start time is the 22nd field of the line, the 20th of these.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * True while the process runs: the same one, when the lock recorded its start time. A lock of
 * the release before holds the pid alone: there, on Linux, the process must be a cdapi-pull.
 */
function isRunning(pid: number, startedAt: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (startedAt === undefined) {
    const command = commandLine(pid);
    return command === null || /cdapi-pull|pull[/\\](cli|main)\.[jt]s/.test(command);
  }
  const now = startTime(pid);
  return now === null || now === startedAt;
}

/** The process's command line (from /proc); null where there is none to read. */
function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return null;
  }
}

/** What a run has to tidy up when Ctrl-C ends the process (cli.ts runs them before it exits). */
export const onInterrupt = new Set<() => void>();
