import type { Kysely } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * An index on each file key of receipts. Before a purge or an import removes a receipt file,
 * it asks whether any row still names it; without these each question read the whole
 * receipts table, so removing a company's files cost a scan per file. A key names its company
 * (`COMPANY/originals/…`, `COMPANY/processed/…`), so these need no company column in front.
 */
const INDEXES = [
  ['receipts_original_key', 'original_key'],
  ['receipts_processed_key', 'processed_key'],
] as const;

export async function up(db: AnyDb): Promise<void> {
  for (const [name, column] of INDEXES) {
    await db.schema.createIndex(name).on('receipts').column(column).execute();
  }
}

export async function down(db: AnyDb): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
}
