import { type Kysely, PostgresAdapter } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * The numbers a purged company had reached: its data version and its change feed's import
 * number. A company imported again under the same id goes on from them, so no answer kept for
 * the purged one (keyed by company and version, on any instance) is served for the new one,
 * and no cursor of the purged one's feed reads on in the new one's (it is answered 410).
 */
export async function up(db: AnyDb): Promise<void> {
  const id = db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer';
  await db.schema
    .createTable('purged_companies')
    .addColumn('company_id', id, (c) => c.primaryKey())
    .addColumn('data_version', 'bigint', (c) => c.notNull())
    .addColumn('change_seq', id, (c) => c.notNull())
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('purged_companies').execute();
}
