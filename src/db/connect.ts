import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../config-error.ts';
import { makeDirectorySync } from '../directories.ts';
import { formatTimestamp } from '../time.ts';
import type { Database, Db } from './database.ts';
import type { DatabaseTarget } from './database-url.ts';
import { closedWithin, dropConnection } from './pg-close.ts';
import { planningOncePool } from './plan-once.ts';

export type Dialect = DatabaseTarget['dialect'];

/**
 * Runs `write` (a few statements, a transaction at most; run again from the start when SQLite
 * says another connection holds its write lock) on `db`, and gives up after `waitMs` (default:
 * the statement timeout) with the last SQLITE_BUSY error. See `writeWithoutBlocking`.
 */
export type WriteWithoutBlocking = <T>(
  write: (db: Db) => Promise<T>,
  waitMs?: number,
) => Promise<T>;

/** An open database: Kysely for every query, and for SQLite its one raw connection too. */
export type DatabaseHandle =
  | {
      readonly db: Db;
      readonly dialect: 'sqlite';
      /** The connection Kysely runs on: a statement run here joins Kysely's transaction. */
      readonly sqlite: SqliteDatabase.Database;
      /** The service's own writes: they never hold the event loop while waiting for the lock. */
      readonly write: WriteWithoutBlocking;
      close(): Promise<void>;
    }
  | {
      readonly db: Db;
      readonly dialect: 'postgres';
      /** The connection pool, for its metrics. */
      readonly pool: pg.Pool;
      /** `write(db)`: a PostgreSQL lock is waited for in the server, holding nothing here. */
      readonly write: WriteWithoutBlocking;
      close(): Promise<void>;
    };

const PG_INT8 = 20;
const PG_DATE = 1082;
const PG_TIMESTAMPTZ = 1184;

/** A UTC session's text form of a timestamp, fractions of a second included. */
const UTC_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\+00$/;

/**
 * `2026-02-20 08:00:00+00` (a UTC session's text form) → `2026-02-20T08:00:00Z`, whole
 * seconds as `formatTimestamp` writes them. Rearranged as text: through a Date, the 5,000
 * timestamps of a change-feed page of expenses took 6 ms. Checked with `test` and cut at the
 * positions the pattern fixes: with `exec`'s match array and groups, this function made 7.4 %
 * of the bytes the service allocated under the cold mix, now 4.4 % (docs/performance.md, item
 * 74).
 */
function timestampFromPostgres(text: string): string {
  if (UTC_TIMESTAMP.test(text)) return `${text.slice(0, 10)}T${text.slice(11, 19)}Z`;
  const iso = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  return formatTimestamp(new Date(iso));
}

/**
 * Values come back from PostgreSQL in the same form SQLite stores them: ids and counts as
 * numbers (every stored id is within Number.MAX_SAFE_INTEGER, the importer checks it), dates
 * as `YYYY-MM-DD` strings and timestamps as UTC ISO strings.
 */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === PG_INT8) return Number;
    if (oid === PG_DATE) return (text: string) => text;
    if (oid === PG_TIMESTAMPTZ) return timestampFromPostgres;
    // biome-ignore lint/suspicious/noExplicitAny: pg's own overloads do not accept a union format.
    return pg.types.getTypeParser(oid, format as any);
  },
};

export interface ConnectionOptions {
  /** PostgreSQL pool size. */
  max?: number;
  /**
   * For the service, not for the CLI's long imports. PostgreSQL cancels a statement that runs
   * longer (and a wait for a pooled connection gives up after as long); SQLite, whose reads
   * never wait under WAL, uses it as the busy timeout for a locked database.
   */
  statementTimeoutMs?: number;
  /**
   * For the service: PostgreSQL runs each statement in its connection's own backend, with no
   * parallel workers (see `SERIAL_QUERIES`). Imports keep them for their long statements.
   */
  serialQueries?: boolean;
  /** PostgreSQL: how long opening a connection may take (default: `statementTimeoutMs`). */
  connectTimeoutMs?: number;
}

/**
 * The service's PostgreSQL sessions plan no parallel workers. Its statements are many and
 * short, run side by side on every core, and PostgreSQL's estimate of a keyset range (a row
 * comparison such as `(start_date, id) > (…)`) is often a hundred times the rows it holds: it
 * planned the counts between a list sample and a date (a few thousand index entries, 0.6 ms)
 * with two workers, whose start-up made them 6 ms alone and 12–17 ms on average under the cold
 * mix. Without them a statement of the mix took 2.0–2.1 ms of database time on average against
 * 3.2–3.8 ms (docs/performance.md, item 50). The URL's `options` come after this, so an operator
 * can still set it.
 */
const SERIAL_QUERIES = '-c max_parallel_workers_per_gather=0';

/**
 * How much longer than the statement timeout a service connection waits for an answer at all.
 * PostgreSQL cancels a slow statement itself; a server that is frozen, or gone without closing
 * the connection (a host or network failure), cannot, and the wait would last until TCP gives
 * up, many minutes later.
 */
const UNANSWERED_GRACE_MS = 1000;

/** pg keeps this private; pg-pool itself reads the client's private state the same way. */
const hasUnansweredQuery = (client: pg.PoolClient): boolean =>
  (client as unknown as { _getActiveQuery?: () => unknown })._getActiveQuery?.() != null;

/**
 * The page size of a new SQLite file: 32 KiB, not SQLite's 4 KiB. A large import writes every
 * page twice (to the WAL, then into the file at the checkpoint) and sorts each index it builds
 * through temporary files, one system call per page (the checkpoint's time is system time, not
 * waits for the disk): with 4 KiB pages the bench's first load made 2.5 million `pwrite`s.
 * 16 KiB took it from 58.7 to 53.7 s; 32 KiB from 65.1 to 60.4 s on average over five
 * alternating runs (system time 15–19 s → 13–16 s), the cold mix of reads as fast. 64 KiB
 * imported faster still (58.6–60.2 s) but read slower, 330–411 req/s against 366–423
 * (docs/performance.md, item 60).
 */
const SQLITE_PAGE_BYTES = 32 * 1024;

/** Errors that say the path names no usable database file: a folder, another file, no access. */
const UNUSABLE_FILE =
  /^(SQLITE_(CANTOPEN|NOTADB|IOERR|READONLY|CORRUPT|PERM)|E(NOENT|ACCES|NOTDIR|ROFS|ISDIR|PERM))/;

/**
 * Opens (or creates) the SQLite file in WAL mode. A path that cannot hold the database stops
 * with a message naming the variable and the path (`file is not a database` alone names
 * neither); a busy or locked file is not that, and fails as it is.
 */
function openSqliteFile(path: string): SqliteDatabase.Database {
  let sqlite: SqliteDatabase.Database | undefined;
  try {
    if (path !== ':memory:') makeDirectorySync(dirname(path));
    sqlite = new SqliteDatabase(path);
    // Before anything is written (a database that holds tables keeps the size it was made with).
    sqlite.pragma(`page_size = ${SQLITE_PAGE_BYTES}`);
    sqlite.pragma('journal_mode = WAL');
    return sqlite;
  } catch (error) {
    sqlite?.close();
    const code = String((error as { code?: unknown }).code ?? '');
    if (!UNUSABLE_FILE.test(code)) throw error;
    throw new ConfigError(
      'DATABASE_URL',
      `cannot use ${path} as the SQLite database: ${(error as Error).message}`,
    );
  }
}

export function openDatabase(
  target: DatabaseTarget,
  options: ConnectionOptions = {},
): DatabaseHandle {
  if (target.dialect === 'sqlite') {
    const busyTimeoutMs = options.statementTimeoutMs ?? 5000;
    const sqlite = configured(openSqliteFile(target.path), busyTimeoutMs);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    // Opened on the first write: most handles (the CLI's reads, the tests') never write there.
    let writes: Db | undefined;
    const writesDb = () => {
      // Nothing but this connection can hold an in-memory database's lock.
      if (sqlite.memory) return db;
      writes ??= new Kysely<Database>({
        dialect: new SqliteDialect({ database: configured(new SqliteDatabase(sqlite.name), 0) }),
      });
      return writes;
    };
    return {
      db,
      dialect: 'sqlite',
      sqlite,
      write: (write, waitMs = busyTimeoutMs) => writeWithoutBlocking(writesDb(), write, waitMs),
      close: async () => {
        await writes?.destroy();
        await db.destroy();
      },
    };
  }
  // Server options given in the URL (`?options=-c …`) are kept, and the session is always UTC:
  // pg lets the URL's own `options` replace ours, so the two are joined here.
  const url = new URL(target.url);
  const urlOptions = url.searchParams.get('options');
  if (urlOptions !== null) url.searchParams.delete('options');
  const pool = new pg.Pool({
    connectionString: urlOptions === null ? target.url : url.toString(),
    max: options.max ?? 10,
    types: pgTypes,
    options: [options.serialQueries ? SERIAL_QUERIES : null, urlOptions, '-c TimeZone=UTC']
      .filter(Boolean)
      .join(' '),
    ...(options.statementTimeoutMs === undefined
      ? {}
      : {
          statement_timeout: options.statementTimeoutMs,
          query_timeout: options.statementTimeoutMs + UNANSWERED_GRACE_MS,
        }),
    connectionTimeoutMillis: options.connectTimeoutMs ?? options.statementTimeoutMs ?? 0,
    // A server that stops answering mid-command (its host gone) is found by the kernel's
    // probes instead of never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // An idle connection stays open (pg-pool closes one after 10 s by default). A new one is
    // a new server process: its first statements load the catalog and plan the prepared
    // statements again, so an integrator polling every minute paid that on every first request.
    idleTimeoutMillis: 0,
  });
  // A client losing its connection (server shut down or restarted) must not crash the process.
  // An idle one the pool drops and reports here. A checked-out one between two queries has no
  // listener of the pool's: without its own, PostgreSQL's "terminating connection" message
  // would be an unhandled 'error' event. Its queries fail (503) and the pool drops it on release.
  pool.on('error', () => {});
  // Every open connection, to drop them when the server does not see them off at close.
  const clients = new Set<pg.Client>();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    clients.add(client);
  });
  pool.on('remove', (client) => clients.delete(client));
  // A connection released while still waiting for an answer (its query gave up after
  // query_timeout) would hold every later query behind that one: it is closed (pg-pool drops a
  // client that is ending) and the next query opens a fresh one.
  pool.on('release', (_error, client) => {
    if (hasUnansweredQuery(client)) void client.end();
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: planningOncePool(pool) }),
  });
  return {
    db,
    dialect: 'postgres',
    pool,
    write: (write) => write(db),
    close: () =>
      closedWithin(db.destroy(), () => {
        for (const client of clients) dropConnection(client);
      }),
  };
}

/** A SQLite file as a thread opens it again: its path, and how long to wait for another writer. */
export interface SqliteFile {
  path: string;
  busyTimeoutMs: number;
}

/**
 * The SQLite file `handle` is connected to, for a thread whose own connection waits for another
 * writer as long as `handle`'s does; null for PostgreSQL and for an in-memory database, which
 * no other connection can open.
 */
export function sqliteFileOf(handle: DatabaseHandle): SqliteFile | null {
  if (handle.dialect !== 'sqlite' || handle.sqlite.memory) return null;
  const { sqlite } = handle;
  return {
    path: sqlite.name,
    busyTimeoutMs: Number(sqlite.pragma('busy_timeout', { simple: true })),
  };
}

/** A thread's own connection to `file` (see `sqliteFileOf`). */
export function openSqliteFileAgain({ path, busyTimeoutMs }: SqliteFile) {
  const handle = openDatabase({ dialect: 'sqlite', path }, { statementTimeoutMs: busyTimeoutMs });
  if (handle.dialect !== 'sqlite') throw new Error(`${path} opened as another database`);
  return handle;
}

/** `use` of a thread's own connection to `file`, closed once `use` is done. */
export async function withSqliteFileAgain<T>(
  file: SqliteFile,
  use: (handle: ReturnType<typeof openSqliteFileAgain>) => Promise<T> | T,
): Promise<T> {
  const handle = openSqliteFileAgain(file);
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

/** The settings of every connection to a SQLite file; `busyTimeoutMs` 0 never waits. */
function configured(sqlite: SqliteDatabase.Database, busyTimeoutMs: number) {
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Deleted and replaced values are overwritten with zeros, not left in free space.
  sqlite.pragma('secure_delete = ON');
  sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return sqlite;
}

/** SQLite's answer while another connection holds the write lock (or wrote since a read began). */
export const isLockedOut = (error: unknown): boolean =>
  /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code));

/**
 * SQLite takes one writer at a time, and better-sqlite3 waits for the lock inside SQLite: on
 * the event loop, every request of the instance waits with it, for up to the busy timeout (a
 * key's `last_used_at` write held `/me` and every other request for 10 s while `cdapi import`
 * ran in another process). `db` is a connection that never waits inside SQLite (busy timeout
 * 0): while the lock is taken, `write` is tried again after a pause of 2, 4, … 50 ms, the event
 * loop free meanwhile, until `waitMs` has passed; then its SQLITE_BUSY error is thrown (the
 * API answers it 503 with `Retry-After`). `waitMs` 0 tries once.
 */
async function writeWithoutBlocking<T>(
  db: Db,
  write: (db: Db) => Promise<T>,
  waitMs: number,
): Promise<T> {
  const giveUpAt = performance.now() + waitMs;
  for (let pauseMs = 2; ; pauseMs = Math.min(pauseMs * 2, 50)) {
    try {
      return await write(db);
    } catch (error) {
      if (!isLockedOut(error) || performance.now() + pauseMs > giveUpAt) throw error;
      await sleep(pauseMs);
    }
  }
}
