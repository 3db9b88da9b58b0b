import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { companyDataVersion } from '../../src/db/companies.queries.ts';
import { openDatabase } from '../../src/db/connect.ts';
import {
  type DataVersions,
  forgetInThisProcess,
  listenedDataVersions,
  sqliteDataVersions,
} from '../../src/db/data-versions.ts';
import type { Db } from '../../src/db/database.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { testDialects, useDatabase, useTempDir } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import { employee, smallCompany, writeNdjson } from '../helpers/records.ts';

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');
const quiet = { warn: () => {}, info: () => {} };

/**
 * A fresh database with company 1, its versions as the service keeps them (once they are kept),
 * and a connection of another session, as another instance or a `cdapi import` has.
 */
async function listening(t: TestContext) {
  const { target, handle } = await useDatabase(t, 'postgres');
  if (handle.dialect !== 'postgres') throw new Error('not PostgreSQL');
  const dir = useTempDir(t);
  const store = new FileReceiptStore(join(dir, 'store'));
  await importFile(handle, store, writeNdjson(dir, smallCompany(1, 0)));
  const versions = listenedDataVersions(handle.db, handle.pool, quiet);
  t.after(() => versions.close());
  await eventually(async () => versions.keeping(), 'versions are kept');
  const other = openDatabase(target, { max: 1 });
  t.after(() => other.close());
  return { handle, store, dir, versions, other: other.db };
}

/**
 * Moves company 1's version on, telling PostgreSQL's listeners or not (the trigger of migration
 * 0014; SQLite has none).
 */
async function bump(db: Db, notified: boolean) {
  if (!notified) {
    await sql`alter table companies disable trigger companies_data_version_changed`.execute(db);
  }
  await sql`update companies set data_version = data_version + 1 where id = 1`.execute(db);
  if (!notified) {
    await sql`alter table companies enable trigger companies_data_version_changed`.execute(db);
  }
}

const versionIs = (versions: DataVersions, expected: number) => async () =>
  (await versions.of(1)) === expected;

describe('data versions of a SQLite file', () => {
  it('are read afresh every time, and see a commit of another connection at once', async (t) => {
    const { target, handle } = await useDatabase(t, 'sqlite');
    if (handle.dialect !== 'sqlite') throw new Error('not SQLite');
    const dir = useTempDir(t);
    const store = new FileReceiptStore(join(dir, 'store'));
    await importFile(handle, store, writeNdjson(dir, smallCompany(1, 0)));
    const versions = sqliteDataVersions(handle.sqlite);
    const first = await versions.of(1);
    assert.ok(first > 0);
    const other = openDatabase(target);
    t.after(() => other.close());
    await bump(other.db, true);
    assert.equal(await versions.of(1), first + 1);
    assert.equal(await versions.of(99), 0);
    assert.equal(versions.keeping(), false);
  });
});

describe('data versions on PostgreSQL', { skip: postgres?.skip ?? false }, () => {
  it('are kept until a change of any session is notified', async (t) => {
    const { versions, other } = await listening(t);
    const first = await versions.of(1);
    // Changed without telling: the kept version is still the answer, so it was not read again.
    await bump(other, false);
    assert.equal(await versions.of(1), first);
    // Changed and told: the next reads (once the notification is in) read the new version.
    await bump(other, true);
    await eventually(versionIs(versions, first + 2), 'the notified version is read');
    // A company without a row reads as 0, kept too.
    assert.equal(await versions.of(99), 0);
  });

  it('are read every time while the connection that hears changes is lost, and kept again once it is back', async (t) => {
    const { versions, other } = await listening(t);
    const first = await versions.of(1);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and query = 'listen cdapi_data_version'`.execute(other);
    await eventually(async () => !versions.keeping(), 'the lost connection is noticed');
    await bump(other, false);
    assert.equal(await versions.of(1), first + 1, 'read again while nothing is heard');
    await eventually(async () => versions.keeping(), 'versions are kept again', 15_000);
    await bump(other, false);
    assert.equal(await versions.of(1), first + 2, 'the first read after is not an old one kept');
    await bump(other, false);
    assert.equal(await versions.of(1), first + 2, 'and it is kept');
  });

  it("are forgotten by this process's own imports at their commit, before any notification", async (t) => {
    const { handle, store, dir, versions, other } = await listening(t);
    const first = await versions.of(1);
    // With the trigger off (in a database of this test's own), only the import can tell.
    await sql`alter table companies disable trigger companies_data_version_changed`.execute(other);
    await importFile(handle, store, writeNdjson(dir, [employee(1, 2)]));
    const imported = await companyDataVersion(other, 1);
    assert.ok(imported > first);
    assert.equal(await versions.of(1), imported);
  });

  it('are forgotten when the companies table is made again, as a restore in place makes it', async (t) => {
    const { versions, other } = await listening(t);
    const first = await versions.of(1);
    // pg_restore --clean: the table dropped and made again, its rows an older copy's, unnotified.
    await sql`alter table companies rename to companies_before`.execute(other);
    await sql`create table companies (like companies_before including all)`.execute(other);
    await sql`insert into companies select * from companies_before`.execute(other);
    await sql`update companies set data_version = data_version - 1 where id = 1`.execute(other);
    assert.equal(await versions.of(1), first, 'kept until the next ping reads the table');
    await eventually(versionIs(versions, first - 1), 'the restored version is read', 15_000);
  });

  it('are not kept from a read under way when a change was told', async (t) => {
    const { versions, other } = await listening(t);
    const reading = versions.of(1);
    forgetInThisProcess([1]);
    const first = await reading;
    await bump(other, false);
    assert.equal(await versions.of(1), first + 1);
  });

  it('are not kept once closed', async (t) => {
    const { versions, other } = await listening(t);
    const first = await versions.of(1);
    await versions.close();
    assert.equal(versions.keeping(), false);
    await bump(other, false);
    assert.equal(await versions.of(1), first + 1);
  });
});
