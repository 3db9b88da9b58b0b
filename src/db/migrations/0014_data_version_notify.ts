import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * PostgreSQL: whatever changes a company's data version (0002), or deletes the company, says so
 * on the `cdapi_data_version` channel with the company's id, delivered at commit. A trigger, so
 * no writer can change a version without it: the service keeps the versions it read until told
 * (src/db/data-versions.ts). SQLite: nothing; the service asks SQLite whether anything was
 * written since it read them.
 */
export async function up(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function cdapi_data_version_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('cdapi_data_version', old.id::text);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger companies_data_version_changed
      after update of data_version or delete on companies
      for each row execute function cdapi_data_version_changed()`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop trigger companies_data_version_changed on companies`.execute(db);
  await sql`drop function cdapi_data_version_changed()`.execute(db);
}
