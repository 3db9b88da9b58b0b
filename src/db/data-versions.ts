import { randomUUID } from 'node:crypto';
import type SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { companyDataVersion } from './companies.queries.ts';
import type { Db } from './database.ts';
import { closedWithin, dropConnection } from './pg-close.ts';

/**
 * Companies' data versions, as every list request needs its company's (cache keys of totals,
 * samples, anchors and responses). On PostgreSQL, reading it was one of the two or three
 * statements of a list request and a quarter of the work of a look-up with the response cache
 * on: each statement sent costs the event loop ~0.1 ms on loopback TCP alone (docs/performance.md,
 * item 69). So a version read is kept until PostgreSQL says it changed.
 *
 * Migration 0014 makes every change of a version (and a company's deletion) notify
 * `cdapi_data_version` with the company's id, from a trigger, at commit. The service listens on
 * a connection of its own, and keeps versions only while that connection is known to hear other
 * sessions: a ping sent through the pool every HEARTBEAT_MS must come back within the next
 * (through a PgBouncer in transaction mode, say, it never does, and every version is read as
 * before). A lost connection or a late ping forgets every kept version and keeps none until the
 * connection is back and a ping has come back again.
 *
 * A database restored in place (`pg_restore --clean`) makes its tables again without a
 * notification, with the versions of an older copy: the ping's query also reads the `companies`
 * table's object id, and a new one forgets every kept version (within HEARTBEAT_MS of the
 * restore). A restore into a new database ends the listening connection, which does the same.
 *
 * What a kept version can be late by: a commit's notification is delivered to the listening
 * connection as the committing session is told of its commit, and a request that arrives in
 * between reads the old version. Its answer is then read again: every answer of a data
 * operation reads the version from the database once made (`readNow`, see
 * `readWithinOneVersion`), as an import can commit between any two of its statements. Imports
 * and purges in this process forget the versions they changed themselves, at once
 * (`forgetInThisProcess`).
 */
export interface DataVersions {
  /** The company's data version (see `companyDataVersion`). */
  of(companyId: number): Promise<number>;
  /**
   * The company's data version read from the database now, never a kept one: whether an import
   * committed while a request read (see `readWithinOneVersion`). A kept version it differs from
   * is forgotten.
   */
  readNow(companyId: number): Promise<number>;
  /**
   * The company's data version as a statement of a request read it beside its rows (see
   * statement-ledger.ts), as good as `readNow`: a kept version it differs from is forgotten.
   */
  seen(companyId: number, version: number): void;
  /** Whether versions are kept now (else each is read). */
  keeping(): boolean;
  close(): Promise<void>;
}

/** The channel migration 0014's trigger notifies. */
const DATA_VERSION_CHANNEL = 'cdapi_data_version';
/** How often a ping is sent through the pool; it must come back before the next. */
const HEARTBEAT_MS = 5000;
/** At most this many versions are kept; the oldest kept goes first. */
const MAX_KEPT = 100_000;
const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 30_000;

/** Versions read with `read`, every time. */
const readEachTime = (read: (companyId: number) => Promise<number>): DataVersions => ({
  of: read,
  readNow: read,
  seen: () => {},
  keeping: () => false,
  close: async () => {},
});

/** Every version read from the database, every time: a read replica, an in-memory SQLite. */
export const readEveryTime = (db: Db): DataVersions =>
  readEachTime((companyId) => companyDataVersion(db, companyId));

/**
 * A SQLite file's versions, read on the event loop from the service's own connection: a look-up
 * by primary key takes a few microseconds there, where sending it to a reader thread and back
 * (`src/db/sqlite-readers.ts`) cost more than the read. The connection reads outside any
 * transaction (the service's writes and imports use others), so each read sees the last commit.
 */
export function sqliteDataVersions(sqlite: SqliteDatabase.Database): DataVersions {
  const read = sqlite
    .prepare<[number], number>('select data_version from companies where id = ?')
    .pluck();
  // A company without a row reads as 0, as `companyDataVersion` reads it.
  return readEachTime(async (companyId) => read.get(companyId) ?? 0);
}

/** Versions read and kept while `trusted`; one read when a version may have changed is not. */
class KeptVersions {
  private readonly kept = new Map<number, number>();
  /** Moves on whenever a kept version may be stale: a read that began before it is not kept. */
  private epoch = 0;
  trusted = false;

  private readonly read: (companyId: number) => Promise<number>;

  constructor(read: (companyId: number) => Promise<number>) {
    this.read = read;
  }

  async of(companyId: number): Promise<number> {
    const kept = this.kept.get(companyId);
    if (kept !== undefined) return kept;
    const epoch = this.epoch;
    const version = await this.read(companyId);
    if (this.trusted && epoch === this.epoch) {
      if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as number);
      this.kept.set(companyId, version);
    }
    return version;
  }

  /** Read from the database; a kept version it differs from is forgotten. */
  async readNow(companyId: number): Promise<number> {
    const version = await this.read(companyId);
    this.seen(companyId, version);
    return version;
  }

  /** A version read from the database now: a kept version it differs from is forgotten. */
  seen(companyId: number, version: number): void {
    const kept = this.kept.get(companyId);
    if (kept !== undefined && kept !== version) this.forget(companyId);
  }

  forget(companyId: number): void {
    this.epoch++;
    this.kept.delete(companyId);
  }

  forgetAll(): void {
    this.epoch++;
    this.kept.clear();
  }
}

const inThisProcess = new Set<KeptVersions>();

/**
 * After a commit of this process that changed these companies' versions: forgets them at once,
 * as the notification can come after this process's next read.
 */
export function forgetInThisProcess(companyIds: readonly number[]): void {
  for (const versions of inThisProcess) {
    for (const companyId of companyIds) versions.forget(companyId);
  }
}

interface Log {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

/** PostgreSQL's versions, kept while a connection of their own hears their changes (see above). */
export function listenedDataVersions(db: Db, pool: pg.Pool, log: Log): DataVersions {
  const versions = new KeptVersions((companyId) => companyDataVersion(db, companyId));
  inThisProcess.add(versions);
  let listener: pg.Client | null = null;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;
  /** The payload of the ping sent last, until it comes back. */
  let ping: string | null = null;
  /** The `companies` table's object id, as the last ping's query read it. */
  let companiesTable: string | null | undefined;

  // Said when versions stop being kept, and once if the first ping never comes back.
  let said = false;
  const distrust = (reason: string) => {
    if (versions.trusted || !said) {
      log.warn({ reason }, 'data versions are read again on every request');
    }
    said = true;
    versions.trusted = false;
    versions.forgetAll();
  };

  const heard = (message: pg.Notification) => {
    if (message.channel !== DATA_VERSION_CHANNEL) return;
    const payload = message.payload ?? '';
    if (payload.startsWith('ping:')) {
      if (payload !== ping) return;
      ping = null;
      retryMs = FIRST_RETRY_MS;
      if (!versions.trusted) log.info({}, 'data versions are kept until they change');
      versions.trusted = true;
      return;
    }
    const companyId = Number(payload);
    if (Number.isSafeInteger(companyId)) versions.forget(companyId);
    else versions.forgetAll();
  };

  const sendPing = () => {
    if (listener === null) return;
    if (ping !== null) distrust(`a ping did not come back within ${HEARTBEAT_MS} ms`);
    ping = `ping:${randomUUID()}`;
    pool
      .query<{ companies: string | null }>(
        'select pg_notify($1, $2), to_regclass($3)::oid::text as companies',
        [DATA_VERSION_CHANNEL, ping, 'companies'],
      )
      .then(({ rows }) => {
        const table = rows[0]?.companies ?? null;
        if (companiesTable !== undefined && table !== companiesTable) {
          distrust('the companies table was made again (the database restored?)');
        }
        companiesTable = table;
      })
      .catch(() => {});
  };

  const reconnect = () => {
    if (closed) return;
    retry = setTimeout(listen, retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  async function listen() {
    const client = new pg.Client(pool.options);
    // 'end' follows an error; a lost connection is handled there.
    client.on('error', () => {});
    client.on('notification', heard);
    client.on('end', () => {
      if (listener !== client) return;
      listener = null;
      ping = null;
      distrust('the connection that hears changes was lost');
      reconnect();
    });
    try {
      await client.connect();
      await client.query(`listen ${DATA_VERSION_CHANNEL}`);
    } catch (error) {
      client.end().catch(() => {});
      distrust(`cannot listen for changes: ${(error as Error).message}`);
      reconnect();
      return;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
    sendPing();
  }

  const heartbeat = setInterval(sendPing, HEARTBEAT_MS);
  heartbeat.unref();
  void listen();
  return {
    of: (companyId) => versions.of(companyId),
    readNow: (companyId) => versions.readNow(companyId),
    seen: (companyId, version) => versions.seen(companyId, version),
    keeping: () => versions.trusted,
    async close() {
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(retry);
      inThisProcess.delete(versions);
      versions.trusted = false;
      versions.forgetAll();
      const client = listener;
      listener = null;
      if (client) await closedWithin(client.end(), () => dropConnection(client));
    },
  };
}
