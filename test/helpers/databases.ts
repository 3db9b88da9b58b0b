import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type DatabaseHandle, type Dialect, openDatabase } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import type { DatabaseTarget } from '../../src/db/database-url.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/**
 * Where a helper registers its clean-up: a test's context (`t`: when the test ends), or
 * `{ after }` of node:test (called in a describe: when its suite ends).
 */
export interface Cleanup {
  after(fn: () => unknown): void;
}

/**
 * The dialects a suite runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL names a
 * server. With REQUIRE_ALL_SUITES=1 (CI) a missing server fails the run instead of skipping.
 */
export interface TestDialect {
  name: Dialect;
  /** Why the suite cannot run here, or null when it can. */
  skip: string | null;
}

export function testDialects(): TestDialect[] {
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl && process.env.REQUIRE_ALL_SUITES === '1') {
    throw new Error(
      'REQUIRE_ALL_SUITES=1 but TEST_DATABASE_URL is not set: the PostgreSQL suites cannot run',
    );
  }
  return [
    { name: 'sqlite', skip: null },
    {
      name: 'postgres',
      skip: pgUrl ? null : 'PostgreSQL suite skipped: TEST_DATABASE_URL is not set',
    },
  ];
}

/**
 * Declares a suite once per dialect. A dialect that cannot run here is reported as one skipped
 * test with the reason, so the runner's summary line counts it.
 */
export function describeEachDialect(title: string, body: (dialect: Dialect) => void): void {
  for (const dialect of testDialects()) {
    const name = `${title} (${dialect.name})`;
    if (dialect.skip) it(name, { skip: dialect.skip }, () => {});
    else describe(name, () => body(dialect.name));
  }
}

export interface TestDatabase {
  /** The DATABASE_URL a child process (the CLI) would use. */
  url: string;
  target: DatabaseTarget;
  handle: DatabaseHandle;
}

/** Runs one statement on the TEST_DATABASE_URL server (create, drop, alter a database). */
export async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL as string });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Migrating a database takes about a second on PostgreSQL and ~75 ms of CPU on SQLite; copying
 * a migrated one takes a fraction of that. Each test process migrates one template per dialect
 * and copies it for every test: `create database … template` on PostgreSQL, a file copy on
 * SQLite (the template is closed first, so its write-ahead log is in the file).
 */
const templates = new Map<Dialect, Promise<string>>();
/** Dropped after the file's tests: templates, which outlive any one test. */
const fileCleanups: Array<() => Promise<unknown>> = [];
// Registered while no test runs, so it belongs to the file's root: it runs after every test.
after(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

function migratedTemplate(dialect: Dialect): Promise<string> {
  let made = templates.get(dialect);
  if (!made) {
    made = makeTemplate(dialect, null, (handle) => migrateToLatest(handle.db));
    templates.set(dialect, made);
  }
  return made;
}

/**
 * A database made once per test process by `fill` on a migrated copy, for tests that start
 * from the same data (`useDatabase(t, dialect, { template })`): what it returns is a template
 * for `useDatabase`, made on its first call.
 */
export function filledTemplate(
  dialect: Dialect,
  fill: (handle: DatabaseHandle) => Promise<unknown>,
): () => Promise<string> {
  let made: Promise<string> | null = null;
  return () => {
    made ??= migratedTemplate(dialect).then((from) => makeTemplate(dialect, from, fill));
    return made;
  };
}

/** A template database (its SQLite path or PostgreSQL name): `from`'s copy, or empty, filled. */
async function makeTemplate(
  dialect: Dialect,
  from: string | null,
  fill: (handle: DatabaseHandle) => Promise<unknown>,
): Promise<string> {
  const created = await createDatabase(dialect, from, 'cdapi_tpl');
  fileCleanups.push(created.drop);
  const handle = openDatabase(created.target);
  try {
    await fill(handle);
  } finally {
    await handle.close();
  }
  if (created.target.dialect === 'sqlite' && existsSync(`${created.target.path}-wal`)) {
    throw new Error('a SQLite template kept its write-ahead log');
  }
  return created.source;
}

/** A new database, a copy of the template `from` when given. */
async function createDatabase(
  dialect: Dialect,
  from: string | null,
  prefix: string,
): Promise<{ target: DatabaseTarget; url: string; source: string; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix.replaceAll('_', '-')}-`));
    const path = join(dir, 'test.db');
    if (from !== null) copyFileSync(from, path);
    return {
      target: { dialect: 'sqlite', path },
      url: `sqlite:${path}`,
      source: path,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(
    from === null ? `create database ${name}` : `create database ${name} template ${from}`,
  );
  const url = databaseUrl(name);
  return {
    target: { dialect: 'postgres', url },
    url,
    source: name,
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

/**
 * A fresh, migrated database of the dialect (or, with `template`, a copy of a `filledTemplate`),
 * dropped when the test ends.
 */
export async function useDatabase(
  t: Cleanup,
  dialect: Dialect,
  options: { migrate?: boolean; template?: () => Promise<string> } = {},
): Promise<TestDatabase> {
  const from = options.template
    ? await options.template()
    : options.migrate === false
      ? null
      : await migratedTemplate(dialect);
  const { target, url, drop } = await createDatabase(dialect, from, 'cdapi_test');
  const handle = openDatabase(target);
  t.after(async () => {
    await handle.close();
    await drop();
  });
  return { url, target, handle };
}

/** Each company's data version (or, with `column`, its latest import number), by company id. */
export async function companyVersions(
  db: Db,
  column: 'data_version' | 'change_seq' = 'data_version',
): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('companies')
    .select(['id', sql.ref<number>(column).as('value')])
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.value)]));
}

/** A temporary folder removed when the test ends. */
export function useTempDir(t: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'cdapi-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
