import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../../src/config.ts';
import { type DatabaseHandle, type Dialect, openDatabase } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
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
 * Migrating a PostgreSQL database takes about a second; copying a migrated template takes a
 * fraction of that. Each test process migrates one template and clones it for every test.
 */
let template: Promise<string> | null = null;
let templateName: string | null = null;
// Registered while no test runs, so it belongs to the file's root: it runs after every test.
after(async () => {
  if (templateName) await adminQuery(`drop database if exists ${templateName} with (force)`);
});

function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `cdapi_tpl_${process.pid}_${randomBytes(4).toString('hex')}`;
    await adminQuery(`create database ${name}`);
    templateName = name;
    const handle = openDatabase({ dialect: 'postgres', url: databaseUrl(name) });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    return name;
  })();
  return template;
}

/**
 * The same for SQLite: migrating a file takes ~75 ms of CPU, copying a migrated one a few. The
 * template is closed before it is copied, so its write-ahead log is in the file.
 */
let sqliteTemplate: Promise<string> | null = null;
let sqliteTemplateDir: string | null = null;
after(() => {
  if (sqliteTemplateDir) rmSync(sqliteTemplateDir, { recursive: true, force: true });
});

function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    sqliteTemplateDir = mkdtempSync(join(tmpdir(), 'cdapi-template-'));
    const path = join(sqliteTemplateDir, 'template.db');
    const handle = openDatabase({ dialect: 'sqlite', path });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    if (existsSync(`${path}-wal`)) throw new Error('the SQLite template kept its write-ahead log');
    return path;
  })();
  return sqliteTemplate;
}

async function createPostgresDatabase(
  migrated: boolean,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `cdapi_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(
    migrated
      ? `create database ${name} template ${await migratedTemplate()}`
      : `create database ${name}`,
  );
  return {
    url: databaseUrl(name),
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

/** A fresh, migrated database of the dialect, dropped when the test ends. */
export async function useDatabase(
  t: Cleanup,
  dialect: Dialect,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  let url: string;
  let target: DatabaseTarget;
  let drop: () => Promise<void>;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cdapi-test-'));
    target = { dialect: 'sqlite', path: join(dir, 'test.db') };
    if (options.migrate !== false) copyFileSync(await migratedSqliteFile(), target.path);
    url = `sqlite:${target.path}`;
    drop = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const created = await createPostgresDatabase(options.migrate !== false);
    url = created.url;
    target = { dialect: 'postgres', url };
    drop = created.drop;
  }
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
