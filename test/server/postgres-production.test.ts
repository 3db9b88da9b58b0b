import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { ServerConfig } from '../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.ts';
import { insertApiKey } from '../../src/db/keys.queries.ts';
import { ensureSchema, migrateToLatest } from '../../src/db/migrate.ts';
import { importFile } from '../../src/import/importer.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { SCOPES } from '../../src/keys/scopes.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { startServer } from '../../src/server.ts';
import { testServerConfig } from '../helpers/api.ts';
import {
  adminQuery,
  type TestDatabase,
  testDialects,
  useDatabase,
  useTempDir,
} from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import { employee, smallCompany, writeNdjson } from '../helpers/records.ts';

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

async function loadCompany(database: TestDatabase, dir: string): Promise<void> {
  const receipts = new FileReceiptStore(`${dir}/receipts`);
  await importFile(database.handle, receipts, writeNdjson(dir, smallCompany(1, 0)));
}

async function createKey(database: TestDatabase): Promise<{ id: number; key: string }> {
  const generated = generateApiKey();
  const { id } = await insertApiKey(database.handle.db, {
    companyId: 1,
    name: 'production',
    prefix: generated.prefix,
    hash: generated.hash,
    scopes: [...SCOPES],
    perMinute: 1000,
    perHour: 10_000,
  });
  return { id, key: generated.key };
}

/** Two databases holding the same company: a primary and a replica of it. */
/**
 * A role made for the test (dropped after the databases, whose drop takes its privileges with
 * them: hooks run in turn), and the URL of `databaseUrl` with it as the login.
 */
async function testRole(t: TestContext, name: string, databaseUrl: string) {
  const role = `cdapi_test_${name}_${process.pid}_${Date.now()}`;
  await adminQuery(`create role ${role} login`);
  t.after(() => adminQuery(`drop role ${role}`));
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = '';
  return { role, url: url.toString() };
}

/** A connection to `databaseUrl` as a role made for the test (see `testRole`). */
async function loginAs(t: TestContext, name: string, databaseUrl: string) {
  const { role, url } = await testRole(t, name, databaseUrl);
  const login = openDatabase({ dialect: 'postgres', url });
  t.after(() => login.close());
  return { role, login };
}

async function primaryAndReplica(t: TestContext) {
  const dir = useTempDir(t);
  const primary = await useDatabase(t, 'postgres');
  const replica = await useDatabase(t, 'postgres');
  await loadCompany(primary, dir);
  await loadCompany(replica, dir);
  return { dir, primary, replica };
}

/** Reads from `replica` in a read-only session, as a hot standby's is: a write there fails. */
function readingFrom(replica: TestDatabase): Pick<ServerConfig, 'readDatabase'> {
  const url = new URL(replica.url);
  url.searchParams.set('options', '-c default_transaction_read_only=on');
  return { readDatabase: { dialect: 'postgres', url: url.toString() } };
}

async function started(t: TestContext, config: ServerConfig) {
  const server = await startServer({ ...config, logLevel: 'silent' });
  t.after(() => server.close());
  return server;
}

if (postgres?.skip) {
  it('PostgreSQL in production', { skip: postgres.skip }, () => {});
} else {
  describe('PostgreSQL in production', () => {
    it('names DATABASE_READ_URL when the replica cannot be used: behind the schema, or no such database', async (t) => {
      const dir = useTempDir(t);
      const primary = await useDatabase(t, 'postgres');
      const unmigrated = await useDatabase(t, 'postgres', { migrate: false });
      const config = testServerConfig(primary, dir);
      await assert.rejects(
        startServer({
          ...config,
          logLevel: 'silent',
          readDatabase: { dialect: 'postgres', url: unmigrated.url },
        }),
        /^Error: DATABASE_READ_URL: the read replica is behind the primary’s schema .*run cdapi migrate/,
      );
      const missing = new URL(primary.url);
      missing.pathname = '/cdapi_no_such_database';
      await assert.rejects(
        startServer({
          ...config,
          logLevel: 'silent',
          readDatabase: { dialect: 'postgres', url: missing.toString() },
        }),
        (error: NodeJS.ErrnoException) =>
          /^DATABASE_READ_URL: the read replica cannot be used: database "cdapi_no_such_database" does not exist/.test(
            error.message,
          ) && error.code === '3D000',
      );
    });

    it('reads from DATABASE_READ_URL, and looks keys up and records their use on the primary', async (t) => {
      const { dir, primary, replica } = await primaryAndReplica(t);
      // Only the replica has this name, and only the primary has the key.
      await replica.handle.db
        .updateTable('employees')
        .set({ full_name: 'Replicated Person' })
        .where('company_id', '=', 1)
        .execute();
      const { id, key } = await createKey(primary);
      const server = await started(t, testServerConfig(primary, dir, readingFrom(replica)));
      const headers = { authorization: `Bearer ${key}` };

      const employees = await server.app.inject({ url: '/api/company/v1/employees', headers });
      assert.equal(employees.statusCode, 200, employees.body);
      assert.deepEqual(
        employees.json().data.map((e: { full_name: string }) => e.full_name),
        ['Replicated Person'],
      );
      const me = await server.app.inject({ url: '/api/company/v1/me', headers });
      assert.equal(me.statusCode, 200);
      const recorded = async (database: TestDatabase) =>
        (
          await database.handle.db
            .selectFrom('api_keys')
            .select('last_used_at')
            .where('id', '=', id)
            .executeTakeFirst()
        )?.last_used_at;
      // The write is fire-and-forget; wait for it to land on the primary.
      await eventually(
        async () => (await recorded(primary)) != null,
        'last_used_at written to the primary',
      );
      assert.equal(await recorded(replica), undefined, 'the replica does not have the key');

      const ready = await server.app.inject({ url: '/readyz' });
      assert.deepEqual(ready.json(), {
        status: 'ok',
        checks: { primary: 'ok', replica: 'ok' },
      });
    });

    it('answers 503 and is not ready while the replica refuses its login a table, until it is granted', async (t) => {
      const { dir, primary, replica } = await primaryAndReplica(t);
      const { key } = await createKey(primary);
      // A read-only role the default privileges missed a table for.
      const { role, url } = await testRole(t, 'ro', replica.url);
      await sql`grant usage on schema public to ${sql.id(role)}`.execute(replica.handle.db);
      await sql`grant select on all tables in schema public to ${sql.id(role)}`.execute(
        replica.handle.db,
      );
      await sql`revoke select on leaves from ${sql.id(role)}`.execute(replica.handle.db);
      const server = await started(
        t,
        testServerConfig(primary, dir, {
          readDatabase: { dialect: 'postgres', url },
        }),
      );
      const headers = { authorization: `Bearer ${key}` };

      const leaves = await server.app.inject({ url: '/api/company/v1/leaves', headers });
      assert.equal(leaves.statusCode, 503, leaves.body);
      assert.equal(leaves.json().code, 'service_unavailable');
      assert.equal(leaves.headers['retry-after'], '5');
      assert.equal(
        (await server.app.inject({ url: '/api/company/v1/employees', headers })).statusCode,
        200,
      );
      const notReady = await server.app.inject({ url: '/readyz' });
      assert.equal(notReady.statusCode, 503);
      assert.equal(
        notReady.json().detail,
        "The read replica does not let the service's login read some of its tables: grant it SELECT on them.",
      );

      await sql`grant select on leaves to ${sql.id(role)}`.execute(replica.handle.db);
      assert.equal(
        (await server.app.inject({ url: '/api/company/v1/leaves', headers })).statusCode,
        200,
      );
      assert.equal((await server.app.inject({ url: '/readyz' })).statusCode, 200);
    });

    it('names the fix when its login may not read the migration table (another role migrated)', async (t) => {
      const database = await useDatabase(t, 'postgres');
      // The role an operator made for the service, while `cdapi migrate` ran as postgres.
      const { role, login } = await loginAs(t, 'owner', database.url);
      await sql`grant usage on schema public to ${sql.id(role)}`.execute(database.handle.db);
      const explained = new RegExp(
        `^the database does not let its login "${role}" read kysely_migration, .* most likely the tables belong to another role, .* give them to this login \\(docs/production.md, "PostgreSQL: the database and its roles"\\)$`,
      );
      // Every command's check at start (cdapi serve's too), and cdapi migrate.
      await assert.rejects(ensureSchema(login), { message: explained });
      await assert.rejects(migrateToLatest(login.db), { message: explained });
      await sql`grant select on kysely_migration to ${sql.id(role)}`.execute(database.handle.db);
      await ensureSchema(login);
    });

    it('names the fix when its login may not use the schema of the tables', async (t) => {
      const database = await useDatabase(t, 'postgres');
      const { role, login } = await loginAs(t, 'schema', database.url);
      // The default grants USAGE on public to every role: taken back, the tables are unseen.
      await sql`revoke usage on schema public from public`.execute(database.handle.db);
      await sql`grant select on all tables in schema public to ${sql.id(role)}`.execute(
        database.handle.db,
      );
      const explained = new RegExp(
        `^the database does not let its login "${role}" use the schema "public", which holds cdapi's tables: grant it USAGE on that schema \\(docs/production.md, "PostgreSQL: the database and its roles"\\)$`,
      );
      // It said "20 pending: run cdapi migrate", and cdapi migrate could not make them either.
      await assert.rejects(ensureSchema(login), { message: explained });
      await assert.rejects(migrateToLatest(login.db), { message: explained });
      await sql`grant usage on schema public to ${sql.id(role)}`.execute(database.handle.db);
      await ensureSchema(login);
    });

    it('migrates a fresh database beside another application’s migration table it may not use', async (t) => {
      const database = await useDatabase(t, 'postgres', { migrate: false });
      const { role, login } = await loginAs(t, 'fresh', database.url);
      // Another Kysely application's, in a schema of its own that the login's path does not name.
      await sql`create extension if not exists pg_trgm`.execute(database.handle.db);
      await sql`create schema other_app`.execute(database.handle.db);
      await sql`create table other_app.kysely_migration (name text primary key)`.execute(
        database.handle.db,
      );
      await sql`grant create on schema public to ${sql.id(role)}`.execute(database.handle.db);
      await assert.rejects(
        ensureSchema(login),
        /schema is not up to date \(\d+ pending\): run cdapi migrate$/,
      );
      assert.ok((await migrateToLatest(login.db)).applied.length > 0);
      await ensureSchema(login);
    });

    it('answers a change-feed cursor ahead of the replica from the primary (another replica gave it)', async (t) => {
      const { dir, primary, replica } = await primaryAndReplica(t);
      const receipts = new FileReceiptStore(`${dir}/receipts`);
      const importIntoPrimary = (id: number) =>
        importFile(primary.handle, receipts, writeNdjson(dir, [employee(1, id)], `${id}.ndjson`));
      // An import this replica has not replayed yet, and another replica has.
      await importIntoPrimary(2);
      const { key } = await createKey(primary);
      const headers = { authorization: `Bearer ${key}` };
      const behind = await started(t, testServerConfig(primary, dir, readingFrom(replica)));
      const upToDate = await started(t, testServerConfig(primary, dir));
      const feed = (server: typeof behind, after?: string) =>
        server.app.inject({
          url: `/api/company/v1/changes?limit=1000${after ? `&after=${after}` : ''}`,
          headers,
        });
      const read = await feed(upToDate);
      assert.equal(read.statusCode, 200, read.body);
      const cursor = read.json().meta.next_cursor as string;
      await importIntoPrimary(3);

      const next = await feed(behind, cursor);
      assert.equal(next.statusCode, 200, next.body);
      assert.deepEqual(
        next
          .json()
          .data.map((entry: { resource: string; id: number }) => [entry.resource, entry.id]),
        [['employee', 3]],
      );
    });

    it('names DATABASE_STATEMENT_TIMEOUT_MS when the database does not answer at start', async (t) => {
      // A port that takes connections and never answers, as a database too slow for the setting.
      const sockets = new Set<Socket>();
      const silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      t.after(() => {
        for (const socket of sockets) socket.destroy();
        return new Promise((resolve) => silent.close(resolve));
      });
      const { port } = silent.address() as AddressInfo;
      const dir = useTempDir(t);
      const database = await useDatabase(t, 'postgres');
      const config = {
        ...testServerConfig(database, dir, { statementTimeoutMs: 300 }),
        database: { dialect: 'postgres' as const, url: `postgres://cdapi@127.0.0.1:${port}/none` },
        logLevel: 'silent',
      };
      await assert.rejects(
        startServer(config),
        /^Error: the database did not answer within DATABASE_STATEMENT_TIMEOUT_MS \(300 ms\), which bounds opening a connection and each statement: .*timeout/,
      );
    });

    it('plans no parallel workers for the service, unless the URL asks; imports keep them', async (t) => {
      const dir = useTempDir(t);
      const database = await useDatabase(t, 'postgres');
      const settings = async (handle: DatabaseHandle) => {
        const { rows } = await sql<{ workers: string; zone: string }>`
          select current_setting('max_parallel_workers_per_gather') as workers,
                 current_setting('TimeZone') as zone`.execute(handle.db);
        return rows[0];
      };
      const serviceSettings = async (url: string) => {
        let seen: Awaited<ReturnType<typeof settings>> | undefined;
        const server = await startServer(
          {
            ...testServerConfig(database, dir),
            database: { dialect: 'postgres', url },
            logLevel: 'silent',
          },
          {
            listening: async (primary) => {
              seen = await settings(primary);
            },
          },
        );
        await server.close();
        return seen;
      };
      assert.deepEqual(await serviceSettings(database.url), { workers: '0', zone: 'UTC' });
      const asked = new URL(database.url);
      asked.searchParams.set(
        'options',
        '-c max_parallel_workers_per_gather=1 -c TimeZone=Asia/Tokyo',
      );
      assert.deepEqual(await serviceSettings(asked.toString()), { workers: '1', zone: 'UTC' });
      // The CLI's connection (imports) keeps the server's default.
      const cli = openDatabase(database.target);
      const workers = (await settings(cli))?.workers;
      await cli.close();
      const plain = new pg.Client({ connectionString: database.url });
      await plain.connect();
      const { rows } = await plain.query('show max_parallel_workers_per_gather');
      await plain.end();
      assert.equal(workers, rows[0].max_parallel_workers_per_gather);
      assert.notEqual(workers, '0');
    });

    it('answers 503 service_unavailable when a query outlasts the statement timeout, then recovers', async (t) => {
      const dir = useTempDir(t);
      const database = await useDatabase(t, 'postgres');
      await loadCompany(database, dir);
      const { key } = await createKey(database);
      // No response cache: the list asked again must reach the database.
      const server = await started(
        t,
        testServerConfig(database, dir, { statementTimeoutMs: 300, responseCacheMb: 0 }),
      );
      const headers = { authorization: `Bearer ${key}` };
      const list = () => server.app.inject({ url: '/api/company/v1/employees', headers });
      assert.equal((await list()).statusCode, 200);

      // A lock the list query needs, held by another session: without the timeout it would wait.
      const locker = new pg.Client({ connectionString: database.url });
      locker.on('error', () => {}); // the database is dropped with force at teardown
      await locker.connect();
      t.after(() => locker.end());
      await locker.query('begin');
      await locker.query('lock table employees in access exclusive mode');
      const refused = await list();
      assert.equal(refused.statusCode, 503);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      assert.equal(refused.json().code, 'service_unavailable');
      assert.equal(refused.headers['retry-after'], '5');
      // Queries that do not need the lock are unaffected.
      assert.equal(
        (await server.app.inject({ url: '/api/company/v1/me', headers })).statusCode,
        200,
      );

      await locker.query('rollback');
      assert.equal((await list()).statusCode, 200);
    });
  });
}
