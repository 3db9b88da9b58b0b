import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database, Db } from './database.ts';

/**
 * Each reader's page cache, in KiB: SQLite's own default, where better-sqlite3 builds it with
 * 16 MB. The file's pages a reader reads are in the system's page cache anyway (a copy of 32
 * KiB costs microseconds); what a larger cache costs is the first touch of its memory: a reader's
 * first statements after a start filled 16 MB page by page (a count over 22,000 leaves of the
 * bench data: 65–89 ms the first time on a new connection, 10–13 ms after; with 2 MB, 13 ms the
 * first time). With 2 MB the cold mix ran as fast (sent one at a time, 2,500 requests: 15.4–16.4
 * s against 15.8–16.9 s; 8 connections: 331–388 req/s against 359–385), its slowest first
 * requests after a restart took 72–101 ms against 143–158, and the service held 28 MB less
 * (peak RSS 244–245 MB against 273).
 */
const READER_CACHE_KIB = 2000;

/**
 * Reads of a SQLite file on worker threads, so a slow query never holds the event loop (and
 * with it every other request of the instance). Each reader thread opens its own read-only
 * connection to the file; under WAL, readers see every committed transaction and never wait
 * for the writer. Queries wait in one queue for the first thread with room (`SqliteReaders`).
 *
 * The threads run at a lower priority than the event loop (`nice`, Linux only): on a host with
 * fewer cores than busy threads, a thread woken with a query otherwise took the core from the
 * event loop, which every request of the instance needs to be parsed, answered and sent.
 *
 * The thread's code is plain JavaScript run with `eval`: a module thread started from the
 * TypeScript sources would first load tsx's compiler (about half a second per thread), and the
 * test suite builds hundreds of apps.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// The file the service opened, never a new empty one where it was (removed or moved away).
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('query_only = 1');
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
// SQLite's own default page cache (2 MB), not the driver's 16 MB (see READER_CACHE_KIB).
db.pragma('cache_size = -' + workerData.cacheKib);
// On Linux a nice value is the calling thread's own: this thread's, not the event loop's. Only
// ever raised (what any process may do), from the one it started with (the process's own).
if (workerData.nice > 0) {
  const os = require('node:os');
  os.setPriority(0, Math.min(19, os.getPriority(0) + workerData.nice));
}
const statements = new Map();
// The statements used last stay: a hit moves its statement to the end, and the one used
// longest ago goes when there are too many.
function prepared(sql) {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    if (statements.size >= ${256}) statements.delete(statements.keys().next().value);
  } else {
    statements.delete(sql);
  }
  statements.set(sql, statement);
  return statement;
}
function run(message) {
  const statement = prepared(message.sql);
  if (message.chain === undefined) {
    if (statement.reader) return statement.all(message.parameters);
    // A write: query_only makes SQLite refuse it (SQLITE_READONLY).
    statement.run(message.parameters);
    return [];
  }
  // A chain: the statement again and again, each time with the previous row's values in the
  // parameters the chain names, until it finds no row or has found \`count\` rows.
  const { positions, count } = message.chain;
  const parameters = [...message.parameters];
  const rows = [];
  while (rows.length < count) {
    const row = statement.get(parameters);
    if (row === undefined) break;
    rows.push(row);
    const values = Object.values(row);
    positions.forEach((position, index) => { parameters[position] = values[index]; });
  }
  return rows;
}
parentPort.on('message', (message) => {
  try {
    parentPort.postMessage({ id: message.id, rows: run(message) });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: { message: error.message, code: error.code } });
  }
});
parentPort.postMessage({ ready: true });
`;

interface Reply {
  id?: number;
  ready?: boolean;
  rows?: unknown[];
  error?: { message: string; code?: string };
}

/** Repeats a one-row query, each time with values of the row it found (see THREAD_SOURCE). */
export interface Chain {
  /** Where each column of a found row goes in the next run's parameters, in column order. */
  positions: number[];
  /** At most this many rows. */
  count: number;
}

/** How long a thread that could not open the file waits before it is started again. */
const RESTART_PAUSE_MS = 1000;

/** A reader thread crashed or could not open the file: the request may work once it is back. */
class ReaderUnavailableError extends Error {
  readonly code = 'SQLITE_CANTOPEN';
}

class ReaderThread {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve(rows: unknown[]): void; reject(error: Error): void }
  >();
  private nextId = 0;
  readonly ready: Promise<void>;
  /** Whether the thread opened the file (its `ready` resolved). */
  opened = false;

  constructor(options: ReaderOptions, onExit: (thread: ReaderThread) => void) {
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        path: options.path,
        busyTimeoutMs: options.busyTimeoutMs,
        cacheKib: READER_CACHE_KIB,
        // Elsewhere the call would lower the whole process, event loop included.
        nice: process.platform === 'linux' ? options.nice : 0,
      },
    });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (reply: Reply) => {
        if (reply.ready) {
          this.worker.unref();
          this.opened = true;
          return resolve();
        }
        const waiting = this.pending.get(reply.id as number);
        if (waiting === undefined) return;
        this.pending.delete(reply.id as number);
        if (this.pending.size === 0) this.worker.unref();
        if (reply.error) {
          const { message, code } = reply.error;
          // SQLite's own errors stay SqliteErrors, as the event loop's connection throws them.
          waiting.reject(
            code?.startsWith('SQLITE_')
              ? new SqliteDatabase.SqliteError(message, code)
              : Object.assign(new Error(message), { code }),
          );
        } else {
          waiting.resolve(reply.rows as unknown[]);
        }
      });
      this.worker.on('error', (error) => reject(error));
      this.worker.on('exit', () => {
        reject(new ReaderUnavailableError('the SQLite reader thread stopped'));
        for (const waiting of this.pending.values()) {
          waiting.reject(new ReaderUnavailableError('the SQLite reader thread stopped'));
        }
        this.pending.clear();
        onExit(this);
      });
    });
    // A failed start is reported to the queries that wait for it.
    this.ready.catch(() => {});
  }

  /** Queries given and not yet answered (counted from the call, before the thread is ready). */
  load = 0;

  async query(sql: string, parameters: readonly unknown[], chain?: Chain): Promise<unknown[]> {
    this.load += 1;
    try {
      await this.ready;
      const id = this.nextId++;
      return await new Promise((resolve, reject) => {
        // An idle thread does not keep the process alive (the owner stops the threads, but a
        // process that forgets to must still be able to exit); one with work to answer does.
        if (this.pending.size === 0) this.worker.ref();
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ id, sql, parameters, chain });
      });
    } finally {
      this.load -= 1;
    }
  }

  /**
   * Waits for the start to end first (the file opened, or the thread stopped because it could
   * not): a thread terminated while it loads better-sqlite3 aborts the whole process (the
   * addon's registration fails on a terminating thread and node-addon-api treats that as fatal:
   * "FATAL ERROR: Error::New napi_get_last_error_info", Node 22 and 24). `ready` rejecting
   * first stopped the other thread mid-start that way.
   */
  async stop(): Promise<void> {
    await this.ready.catch(() => {});
    await this.worker.terminate();
  }
}

export interface ReaderOptions {
  path: string;
  threads: number;
  /** How long a read waits on a locked file (only while a checkpoint resets the WAL). */
  busyTimeoutMs: number;
  /**
   * How far the threads' nice value is raised above the process's own (0–19, at most to 19),
   * on Linux; ignored elsewhere.
   */
  nice: number;
}

/** A query waiting for a reader thread. */
interface Waiting {
  sql: string;
  parameters: readonly unknown[];
  chain: Chain | undefined;
  resolve(rows: unknown[]): void;
  reject(error: Error): void;
}

/**
 * The reader threads of one SQLite file; a thread that stops is replaced.
 *
 * Queries wait in one queue, and a thread takes the next when it has answered its own. Sent to
 * a thread as they came, a quick look-up could wait behind a slow page on one thread while the
 * other thread was idle.
 */
export class SqliteReaders {
  private threads: ReaderThread[] = [];
  private readonly waiting: Waiting[] = [];
  private stopped = false;

  private readonly options: ReaderOptions;

  constructor(options: ReaderOptions) {
    this.options = options;
    for (let i = 0; i < options.threads; i++) this.threads.push(this.start());
  }

  /**
   * A thread that stops is replaced: at once when it had opened the file (it crashed), after
   * RESTART_PAUSE_MS when it never did (the file was removed, no file descriptor was left), so
   * a start that keeps failing is not retried in a loop that takes a core. Meanwhile its
   * queries fail as an unavailable database (503).
   */
  private start(): ReaderThread {
    return new ReaderThread(this.options, (exited) => {
      const replace = () => {
        if (this.stopped) return;
        this.threads = this.threads.map((thread) => (thread === exited ? this.start() : thread));
      };
      if (exited.opened) replace();
      else setTimeout(replace, RESTART_PAUSE_MS).unref();
    });
  }

  /**
   * Resolves once every thread has opened the file. When one could not, stops them all and
   * rejects with its error, so a service that cannot read its database fails to start.
   */
  async ready(): Promise<void> {
    try {
      await Promise.all(this.threads.map((thread) => thread.ready));
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Runs a query on the first thread to be free. */
  query(sql: string, parameters: readonly unknown[], chain?: Chain): Promise<unknown[]> {
    if (this.stopped) {
      return Promise.reject(new ReaderUnavailableError('the SQLite reader threads are stopped'));
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ sql, parameters, chain, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Hands waiting queries to idle threads, one each. A thread holding a second query, to start
   * on without waiting for the event loop, answered the cold mix no faster (docs/performance.md)
   * and let that query wait behind a slow one while another thread came free first.
   */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      const idle = this.threads.find((thread) => thread.load === 0);
      if (!idle) return;
      const { sql, parameters, chain, resolve, reject } = this.waiting.shift() as Waiting;
      idle
        .query(sql, parameters, chain)
        .then(resolve, reject)
        .finally(() => this.dispatch());
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const { reject } of this.waiting.splice(0)) {
      reject(new ReaderUnavailableError('the SQLite reader threads are stopped'));
    }
    await Promise.all(this.threads.map((thread) => thread.stop()));
  }
}

class ReaderConnection implements DatabaseConnection {
  private readonly readers: SqliteReaders;

  constructor(readers: SqliteReaders) {
    this.readers = readers;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const rows = await this.readers.query(compiledQuery.sql, compiledQuery.parameters);
    return { rows: rows as R[] };
  }

  // biome-ignore lint/correctness/useYield: reader connections do not stream.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('SQLite reader threads do not stream results');
  }
}

/**
 * Kysely's driver over the reader threads. A query needs no connection of its own (each
 * thread answers its queries in turn), so every acquisition shares one; transactions are
 * refused: readers only read, and each statement sees the latest commit.
 */
class ReaderDriver implements Driver {
  private readonly connection: ReaderConnection;

  constructor(readers: SqliteReaders) {
    this.connection = new ReaderConnection(readers);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    throw new Error('SQLite reader threads take no transactions');
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async releaseConnection(): Promise<void> {}

  /** The threads belong to whoever started them (`SqliteReaders.stop`). */
  async destroy(): Promise<void> {}
}

/** Kysely over the reader threads: the SQLite dialect's SQL, run off the event loop. */
export function readersDb(readers: SqliteReaders): Db {
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ReaderDriver(readers),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
  return new Kysely<Database>({ dialect });
}
