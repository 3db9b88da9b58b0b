import { type ColumnDataType, type Kysely, PostgresAdapter } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * What `cdapi import` runs have done, one row per outcome (`succeeded`, `failed`), kept as
 * running totals so it stays one row each however many imports run. Imports are separate
 * processes; the service reads these rows when its metrics are scraped.
 */
export async function up(db: AnyDb): Promise<void> {
  const count: ColumnDataType =
    db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer';
  await db.schema
    .createTable('import_stats')
    .addColumn('outcome', 'text', (c) => c.primaryKey())
    .addColumn('runs', count, (c) => c.notNull().defaultTo(0))
    .addColumn('records', count, (c) => c.notNull().defaultTo(0))
    .addColumn('duration_ms', count, (c) => c.notNull().defaultTo(0))
    .addColumn('last_duration_ms', count)
    .addColumn('last_finished_ms', count)
    .execute();
  await db
    .insertInto('import_stats')
    .values([{ outcome: 'succeeded' }, { outcome: 'failed' }])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('import_stats').execute();
}
