import type { Kysely } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * A per-company counter that every import touching the company increments in its own
 * transaction. Whatever is derived from a company's data (list counts, page positions,
 * responses) can be cached under it and is never served after the data changed.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('companies')
    .addColumn('data_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('companies').dropColumn('data_version').execute();
}
