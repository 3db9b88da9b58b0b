import type { Kysely } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * A third outcome of import runs (0007): `empty`, an import that ended without a record. It
 * counted as `succeeded`, so an upstream export that arrived empty every night kept the
 * "no import" alert quiet.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.insertInto('import_stats').values({ outcome: 'empty' }).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.deleteFrom('import_stats').where('outcome', '=', 'empty').execute();
}
