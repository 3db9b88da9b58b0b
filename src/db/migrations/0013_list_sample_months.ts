import { type Kysely, PostgresAdapter } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * Beside each sort order's list samples (0006), how many rows of each status up to every 4th
 * sample were dated in each month, for the date columns a window or `updated_since` filters on
 * (see src/db/sampled-lists.ts): one row per company, list, sort column and date column, the
 * counts as one array of 32-bit integers (sample × month × status), read whole. A set made before
 * this migration has none until its samples are made again (after the migration, by
 * `migrateDatabase`, or by the next import of any company); the list is read as before meanwhile.
 */
export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('list_sample_months')
    .addColumn('company_id', pg ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('list', 'text', (c) => c.notNull())
    .addColumn('sort_column', 'text', (c) => c.notNull())
    .addColumn('date_column', 'text', (c) => c.notNull())
    .addColumn('first_month', 'integer', (c) => c.notNull())
    .addColumn('months', 'integer', (c) => c.notNull())
    .addColumn('statuses', 'text', (c) => c.notNull())
    .addColumn('counts', pg ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_sample_months_pk', [
      'company_id',
      'list',
      'sort_column',
      'date_column',
    ])
    .addForeignKeyConstraint('list_sample_months_set', ['company_id', 'list'], 'list_sample_sets', [
      'company_id',
      'list',
    ])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('list_sample_months').execute();
}
