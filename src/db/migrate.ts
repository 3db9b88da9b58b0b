import { type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { DatabaseHandle } from './connect.ts';
import type { Db } from './database.ts';
import { refreshListSamples } from './list-samples-refresh.ts';
import { MigrationError } from './migration-error.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_data_version.ts';
import * as m0003 from './migrations/0003_covering_date_indexes.ts';
import * as m0004 from './migrations/0004_search_indexes.ts';
import * as m0005 from './migrations/0005_covering_list_indexes.ts';
import * as m0006 from './migrations/0006_list_summaries.ts';
import * as m0007 from './migrations/0007_import_stats.ts';
import * as m0008 from './migrations/0008_change_feed.ts';
import * as m0009 from './migrations/0009_expense_text_indexes.ts';
import * as m0010 from './migrations/0010_leave_counts.ts';
import * as m0011 from './migrations/0011_changes_forgotten_position.ts';
import * as m0012 from './migrations/0012_receipt_file_indexes.ts';
import * as m0013 from './migrations/0013_list_sample_months.ts';
import * as m0014 from './migrations/0014_data_version_notify.ts';
import * as m0015 from './migrations/0015_changes_forgotten_resources.ts';
import * as m0016 from './migrations/0016_import_stats_empty.ts';
import * as m0017 from './migrations/0017_purged_companies.ts';
import * as m0018 from './migrations/0018_fold_final_sigma.ts';
import * as m0019 from './migrations/0019_covering_employee_indexes.ts';
import * as m0020 from './migrations/0020_group_window_indexes.ts';
import * as m0021 from './migrations/0021_expense_text_date_indexes.ts';
import * as m0022 from './migrations/0022_employee_search_columns.ts';
import * as m0023 from './migrations/0023_covering_leave_employee_index.ts';
import * as m0024 from './migrations/0024_expense_text_updated_indexes.ts';
import { SchemaOutdatedError } from './schema-outdated-error.ts';
import { isPostgres } from './search.ts';
import { isConnectionRefused, isPermissionDenied, isSchemaMissing } from './unavailable.ts';

// Listed statically (not read from the folder) so they run the same from src/ under tsx and
// from dist/ after a build.
const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_data_version': m0002,
  '0003_covering_date_indexes': m0003,
  '0004_search_indexes': m0004,
  '0005_covering_list_indexes': m0005,
  '0006_list_summaries': m0006,
  '0007_import_stats': m0007,
  '0008_change_feed': m0008,
  '0009_expense_text_indexes': m0009,
  '0010_leave_counts': m0010,
  '0011_changes_forgotten_position': m0011,
  '0012_receipt_file_indexes': m0012,
  '0013_list_sample_months': m0013,
  '0014_data_version_notify': m0014,
  '0015_changes_forgotten_resources': m0015,
  '0016_import_stats_empty': m0016,
  '0017_purged_companies': m0017,
  '0018_fold_final_sigma': m0018,
  '0019_covering_employee_indexes': m0019,
  '0020_group_window_indexes': m0020,
  '0021_expense_text_date_indexes': m0021,
  '0022_employee_search_columns': m0022,
  '0023_covering_leave_employee_index': m0023,
  '0024_expense_text_updated_indexes': m0024,
};

export const migrationProvider: MigrationProvider = { getMigrations: async () => migrations };

const LATEST_MIGRATION = Object.keys(migrations).at(-1) as string;

/**
 * Whether the database holds this version's schema: its latest migration is recorded (a later
 * version's migrations add to it). False for a database recreated or restored empty, or behind.
 */
export async function holdsCurrentSchema(db: Db): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    select name from kysely_migration where name = ${LATEST_MIGRATION}`.execute(db);
  return rows.length > 0;
}

/**
 * The tables of the database's schema that its login may not read (PostgreSQL; none on
 * SQLite, which has no privileges): a replica's read-only role misses those the default
 * privileges of docs/production.md do not cover, and every list reading them would fail.
 */
export async function unreadableTables(handle: DatabaseHandle): Promise<string[]> {
  if (handle.dialect !== 'postgres') return [];
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind in ('r', 'p')
       and not has_table_privilege(c.oid, 'SELECT')
     order by c.relname`.execute(handle.db);
  return rows.map((row) => row.name);
}

export interface MigrationOutcome {
  applied: string[];
  /** Migrations of a newer release the database holds (a roll-back): left as they are. */
  newer?: string[];
}

/** The migrations the database records, by name; none before the first made their table. */
async function recordedMigrations(db: Db): Promise<string[]> {
  try {
    const { rows } = await sql<{ name: string }>`
      select name from kysely_migration order by name`.execute(db);
    return rows.map((row) => row.name);
  } catch (error) {
    if (!isSchemaMissing(error)) throw await explainedDenial(db, error);
    const unusable = await unusableSchema(db);
    if (unusable) throw unusable;
    return [];
  }
}

/**
 * A PostgreSQL login without `USAGE` on the schema that holds cdapi's tables sees none of them:
 * told that every migration is pending, it would run `cdapi migrate`, which cannot make them
 * either. That schema is one its `search_path` names (where the tables are looked for, and
 * made), which PostgreSQL leaves out of the path when the login may not use it. Null where no
 * such schema holds a `kysely_migration` (another application's, in a schema of its own, is
 * none of cdapi's business), and on SQLite.
 */
async function unusableSchema(db: Db): Promise<Error | null> {
  if (!isPostgres(db)) return null;
  const { rows: settings } = await sql<{ path: string; login: string }>`
    select current_setting('search_path') as path, current_user as login`.execute(db);
  const { path = '', login = '' } = settings[0] ?? {};
  const named = path
    .split(',')
    .map((name) => name.trim().replace(/^"(.*)"$/, '$1'))
    .map((name) => (name === '$user' ? login : name))
    .filter((name) => name !== '');
  if (named.length === 0) return null;
  const { rows } = await sql<{ schema: string }>`
    select n.nspname as schema
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relname = 'kysely_migration' and n.nspname = any(${named})
       and not has_schema_privilege(n.oid, 'USAGE')`.execute(db);
  // The first the path names: where the login would have found the tables.
  const schema = named.find((name) => rows.some((row) => row.schema === name));
  if (schema === undefined) return null;
  return new Error(
    `the database does not let its login ${JSON.stringify(login)} use the schema ${JSON.stringify(schema)}, which holds cdapi's tables: grant it USAGE on that schema (docs/production.md, "PostgreSQL: the database and its roles")`,
  );
}

/**
 * PostgreSQL's "permission denied for table kysely_migration" said nothing of what the operator
 * has to do: most likely the tables belong to another role, the one that ran the first `cdapi
 * migrate` (`postgres`, say), and this login may not even read which migrations ran (a revoked
 * grant gives the same error). Any other error as it is.
 */
async function explainedDenial(db: Db, error: unknown): Promise<unknown> {
  if (!isPermissionDenied(error)) return error;
  const { rows } = await sql<{ login: string }>`select current_user as login`.execute(db);
  return new Error(
    `the database does not let its login ${JSON.stringify(rows[0]?.login)} read kysely_migration, the table where cdapi records its migrations: most likely the tables belong to another role, the one that ran cdapi migrate; give them to this login (docs/production.md, "PostgreSQL: the database and its roles")`,
  );
}

/**
 * Applies every pending migration; running it again applies nothing. A database a newer
 * version migrated further holds this version's schema and more: nothing to apply (rolling a
 * deployment back keeps working). One that lacks a migration of this version's but holds one
 * this version does not know is refused, naming both: it was migrated by another line of
 * versions, and this one's cannot run after those.
 */
export async function migrateToLatest(db: Db): Promise<MigrationOutcome> {
  const recorded = await recordedMigrations(db);
  const unknown = recorded.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length > 0) {
    const missing = Object.keys(migrations).filter((name) => !recorded.includes(name));
    if (missing.length === 0) return { applied: [], newer: unknown };
    throw new Error(
      `the database holds migrations this version of cdapi does not have (${unknown.join(', ')}) and lacks some it has (${missing.join(', ')}): it was migrated by another version; migrate it with that one`,
    );
  }
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    // Not a migration's fault: the connection's, told as every command tells it.
    if (isConnectionRefused(error)) throw error;
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(failed?.migrationName ?? null, reason, error);
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}

/**
 * Applies every pending migration, then makes what they add beside the data an import makes
 * (0013's month counts of the list samples already stored, which the lists are read without
 * until then): the commands' migration, `cdapi migrate` and SQLite's own at every start.
 */
export async function migrateDatabase(handle: DatabaseHandle): Promise<MigrationOutcome> {
  const outcome = await migrateToLatest(handle.db);
  if (outcome.applied.length > 0) await refreshListSamples(handle);
  return outcome;
}

/**
 * The embedded SQLite default migrates itself; PostgreSQL changes only through an explicit
 * `cdapi migrate`, so a stale schema there is an error naming the fix.
 */
export async function ensureSchema(handle: DatabaseHandle): Promise<void> {
  if (handle.dialect === 'sqlite') {
    await migrateDatabase(handle);
    return;
  }
  const migrations = await new Migrator({ db: handle.db, provider: migrationProvider })
    .getMigrations()
    .catch(async (error: unknown) => {
      throw await explainedDenial(handle.db, error);
    });
  const pending = migrations.filter((m) => m.executedAt === undefined).length;
  if (pending === migrations.length) {
    const unusable = await unusableSchema(handle.db);
    if (unusable) throw unusable;
  }
  if (pending > 0) {
    throw new SchemaOutdatedError(
      `the database schema is not up to date (${pending} pending): run cdapi migrate`,
    );
  }
}
