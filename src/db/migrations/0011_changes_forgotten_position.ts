import type { Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * The position of the newest forgotten deletion, not only its import's number: a cursor inside
 * that import, before the deletion, missed it and is answered 410, while one after it (the
 * import's last entry, say) has seen every forgotten deletion and reads on. Companies that
 * already forgot deletions get the end of that import: the position inside it was not kept, so
 * every cursor inside it is answered 410, as is safe.
 */
export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = pg ? 'bigint' : 'integer';
  await db.schema
    .alterTable('companies')
    .addColumn('changes_forgotten_resource', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('companies')
    .addColumn('changes_forgotten_id', id, (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .updateTable('companies')
    .set({ changes_forgotten_resource: 4, changes_forgotten_id: Number.MAX_SAFE_INTEGER })
    .where('changes_forgotten_seq', '>', 0)
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('companies').dropColumn('changes_forgotten_id').execute();
  await db.schema.alterTable('companies').dropColumn('changes_forgotten_resource').execute();
}
