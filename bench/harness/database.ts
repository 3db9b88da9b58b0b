import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, extname, resolve } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.ts';
import { type ImportStep, importSteps } from './import-steps.ts';
import { onInterrupt } from './interrupt.ts';
import type { Engine } from './options.ts';
import { runCli, runCliMeasured } from './processes.ts';
import { describeServerMemory, type ServerMemory, serverMemory } from './server-memory.ts';

const BENCH_DATA_DIR = 'bench-data';

export type ImportFigures =
  | {
      status: 'imported';
      records: number;
      /** Wall time of the whole `cdapi import` process, start-up included. */
      seconds: number;
      recordsPerSecond: number;
      peakRssBytes: number | null;
      rssSource: string;
      /** Where the time went (`importSteps`): none for an import that printed no progress. */
      steps: ImportStep[];
    }
  | { status: 'reused'; reason: string };

export interface PreparedDatabase {
  engine: Engine;
  /** Where the data lives, for the report (never a password). */
  label: string;
  /** The environment `cdapi` commands and the service run with against this database. */
  env: NodeJS.ProcessEnv;
  import: ImportFigures;
}

function cliEnv(databaseUrl: string, receiptsDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    RECEIPTS_DIR: receiptsDir,
    LOG_LEVEL: 'warn',
  };
}

/**
 * bench-data/<name>-<engine>-receipts: emptied before each import so every import starts cold,
 * and there even when the data has no receipts, so the service does not warn that it is missing.
 */
function receiptsDirFor(dataFile: string, engine: Engine): string {
  const dir = resolve(
    BENCH_DATA_DIR,
    `${basename(dataFile, extname(dataFile))}-${engine}-receipts`,
  );
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function importData(dataFile: string, env: NodeJS.ProcessEnv): Promise<ImportFigures> {
  const receiptsDir = env.RECEIPTS_DIR as string;
  rmSync(receiptsDir, { recursive: true, force: true });
  mkdirSync(receiptsDir);
  return timedImport(dataFile, env);
}

/**
 * Imports `dataFile` again into the prepared database, which already holds it: every record
 * replaces a stored one with the same values (the receipts already stored stay).
 */
export function reimportData(dataFile: string, database: PreparedDatabase): Promise<ImportFigures> {
  return timedImport(dataFile, database.env);
}

async function timedImport(dataFile: string, env: NodeJS.ProcessEnv): Promise<ImportFigures> {
  const run = await runCliMeasured(['import', '--json', dataFile], env);
  const { records } = JSON.parse(run.stdout) as { records: number };
  return {
    status: 'imported',
    records,
    seconds: run.seconds,
    recordsPerSecond: records / run.seconds,
    peakRssBytes: run.peakRssBytes,
    rssSource: run.rssSource,
    steps: importSteps(run.stderr, run.seconds),
  };
}

function removeSqliteFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

/** bench-data/<name>.db, imported afresh when missing or older than the data file. */
async function prepareSqlite(dataFile: string): Promise<PreparedDatabase> {
  const path = resolve(BENCH_DATA_DIR, `${basename(dataFile, extname(dataFile))}.db`);
  const env = cliEnv(`sqlite:${path}`, receiptsDirFor(dataFile, 'sqlite'));
  const prepared = { engine: 'sqlite' as const, label: path, env };
  if (existsSync(path) && statSync(path).mtimeMs >= statSync(dataFile).mtimeMs) {
    return { ...prepared, import: { status: 'reused', reason: 'database newer than the data' } };
  }
  removeSqliteFiles(path);
  // A failed or interrupted import leaves a migrated, empty file that would look up to date
  // next time.
  const forget = onInterrupt(() => removeSqliteFiles(path));
  try {
    return { ...prepared, import: await importData(dataFile, env) };
  } catch (error) {
    removeSqliteFiles(path);
    throw error;
  } finally {
    forget();
  }
}

async function createPostgresDatabaseIfMissing(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const maintenanceUrl = new URL(url);
  maintenanceUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenanceUrl.toString() });
  await client.connect();
  try {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount === 0)
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * The harness migrates, imports into and deletes from the database it is given: one holding
 * tables but no migrations of this service's is somebody else's, and is left alone.
 */
async function refuseForeignTables(url: string): Promise<void> {
  await withClient(url, async (client) => {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = current_schema() ORDER BY table_name`,
    );
    const names = rows.map((row) => row.table_name);
    // Kysely's table by its default name: another Kysely application has one too.
    const ours =
      names.includes('kysely_migration') &&
      (await client.query(`SELECT 1 FROM kysely_migration WHERE name = '0001_initial'`))
        .rowCount === 1;
    if (names.length > 0 && !ours) {
      throw new Error(
        `the database holds tables that are not this service's (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}): name a new database, or one the benchmark made`,
      );
    }
  });
}

async function countCompanies(url: string): Promise<number> {
  const handle = openDatabase({ dialect: 'postgres', url });
  try {
    const row = await handle.db
      .selectFrom('companies')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  } finally {
    await handle.close();
  }
}

/**
 * The service's PostgreSQL pool: `DATABASE_POOL_MAX` from the environment, else as many
 * connections as the host has cores, as docs/production.md advises where PostgreSQL shares the
 * service's cores (the bench host runs both on the same two): more connections than PostgreSQL
 * can run at once only make its statements share the cores, and lengthen every tail.
 */
const servicePoolMax = (env: NodeJS.ProcessEnv): string =>
  env.DATABASE_POOL_MAX || String(availableParallelism());

/** Creates the database if needed, migrates it, and imports into an empty one. */
async function preparePostgres(dataFile: string, url: string): Promise<PreparedDatabase> {
  const pool = servicePoolMax(process.env);
  const env = { ...cliEnv(url, receiptsDirFor(dataFile, 'postgres')), DATABASE_POOL_MAX: pool };
  const label = new URL(url);
  label.password = '';
  let memory: ServerMemory;
  try {
    await createPostgresDatabaseIfMissing(url);
    await refuseForeignTables(url);
    memory = await withClient(url, (client) => serverMemory(client, url));
  } catch (error) {
    throw new Error(`BENCH_DATABASE_URL (${label}): ${(error as Error).message}`);
  }
  const prepared = {
    engine: 'postgres' as const,
    label: `${label.toString()}, the service's pool ${pool} connections; the server's ${describeServerMemory(memory)}`,
    env,
  };
  await runCli(['migrate'], env);
  const source = dataFileIdentity(dataFile);
  if ((await countCompanies(url)) > 0) {
    const recorded = await databaseComment(url);
    if (recorded !== null && recorded !== source) {
      throw new Error(
        `BENCH_DATABASE_URL (${label}) holds the data of another file (${recorded.slice(PROVENANCE.length)}), not of ${source.slice(PROVENANCE.length)}: drop it or name another database`,
      );
    }
    const reason =
      recorded === null
        ? 'companies table not empty; the file it came from is not recorded (an older harness made it): taken to be this one'
        : 'companies table not empty, imported from this file';
    return { ...prepared, import: { status: 'reused', reason } };
  }
  const figures = await importData(dataFile, env);
  await setDatabaseComment(url, source);
  return { ...prepared, import: figures };
}

/** How the database's comment begins when it names the data file the harness imported. */
const PROVENANCE = 'cdapi bench data ';

/**
 * The data file, as the database's comment records it: its name, its size and a digest of its
 * first MiB (files of other seeds or sizes differ there), so a database is reused only for the
 * file it was imported from: the feed part deletes records by the file's ids and brings them
 * back from its lines.
 */
function dataFileIdentity(dataFile: string): string {
  const head = Buffer.alloc(2 ** 20);
  const fd = openSync(dataFile, 'r');
  try {
    const read = readSync(fd, head, 0, head.length, 0);
    const digest = createHash('sha256').update(head.subarray(0, read)).digest('hex').slice(0, 16);
    return `${PROVENANCE}${basename(dataFile)}, ${statSync(dataFile).size} bytes, ${digest}`;
  } finally {
    closeSync(fd);
  }
}

/** `work` on a connection of its own to the database `url` names, and that database's name. */
async function withClient<T>(
  url: string,
  work: (client: pg.Client, name: string) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT current_database() AS name');
    return await work(client, rows[0]?.name as string);
  } finally {
    await client.end();
  }
}

function databaseComment(url: string): Promise<string | null> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database
        WHERE datname = current_database()`,
    );
    const comment = rows[0]?.comment ?? null;
    return comment?.startsWith(PROVENANCE) ? comment : null;
  });
}

function setDatabaseComment(url: string, comment: string): Promise<void> {
  return withClient(url, async (client, name) => {
    await client.query(
      `COMMENT ON DATABASE ${client.escapeIdentifier(name)} IS ${client.escapeLiteral(comment)}`,
    );
  });
}

export function prepareDatabase(
  engine: Engine,
  dataFile: string,
  postgresUrl: string,
): Promise<PreparedDatabase> {
  return engine === 'sqlite' ? prepareSqlite(dataFile) : preparePostgres(dataFile, postgresUrl);
}
