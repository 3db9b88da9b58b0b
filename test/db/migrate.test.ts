import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest, migrationProvider } from '../../src/db/migrate.ts';
import { cdapi } from '../helpers/cli.ts';
import { describeEachDialect, useDatabase } from '../helpers/databases.ts';

describeEachDialect('migrating a database another version migrated', (dialect) => {
  it('applies nothing to one a newer version migrated further, and refuses one migrated by another line of versions, naming both sides', async (t) => {
    const { handle, url } = await useDatabase(t, dialect);
    const { db } = handle;
    const record = (name: string) =>
      sql`insert into kysely_migration (name, timestamp) values (${name}, '2026-12-02T00:00:00.000Z')`.execute(
        db,
      );
    await record('9000_from_a_newer_version');
    assert.deepEqual(await migrateToLatest(db), {
      applied: [],
      newer: ['9000_from_a_newer_version'],
    });
    const told = cdapi(['migrate'], { DATABASE_URL: url });
    assert.equal(told.status, 0, told.stderr);
    assert.equal(
      told.stdout,
      'Database is up to date; it also holds 1 migration of a newer release (9000_from_a_newer_version), left alone.\n',
    );

    const latest = Object.keys(await migrationProvider.getMigrations()).at(-1) as string;
    await sql`delete from kysely_migration where name = ${latest}`.execute(db);
    await assert.rejects(migrateToLatest(db), {
      message: `the database holds migrations this version of cdapi does not have (9000_from_a_newer_version) and lacks some it has (${latest}): it was migrated by another version; migrate it with that one`,
    });
  });
});
