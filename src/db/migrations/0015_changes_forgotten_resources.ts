import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * The newest forgotten deletion of each resource of a company's change feed, beside the newest
 * of all (`companies.changes_forgotten_*`, 0008 and 0011): a cursor is answered 410 only for a
 * deletion of a resource it reads, forgotten after it was given, past its position. Companies
 * that already forgot deletions get, for every resource, a position no earlier than that
 * resource's newest forgotten one (which it was is not known; the newest of all bounds them):
 * a cursor before it is answered 410 as before, as is safe.
 */
export async function up(db: AnyDb): Promise<void> {
  const id = db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer';
  await db.schema
    .createTable('changes_forgotten')
    .addColumn('company_id', id, (c) => c.notNull())
    .addColumn('resource', 'integer', (c) => c.notNull())
    .addColumn('change_seq', id, (c) => c.notNull())
    .addColumn('record_id', id, (c) => c.notNull())
    .addPrimaryKeyConstraint('changes_forgotten_pk', ['company_id', 'resource'])
    .execute();
  // Before the newest of all at its own import's number: the resource's end of that import;
  // after it: the end of the import before (the newest of all is the last forgotten there).
  for (let resource = 0; resource <= 4; resource++) {
    await sql`insert into changes_forgotten (company_id, resource, change_seq, record_id)
      select id, ${resource},
        case when changes_forgotten_resource >= ${resource} then changes_forgotten_seq
          else changes_forgotten_seq - 1 end,
        case when changes_forgotten_resource = ${resource} then changes_forgotten_id
          else ${Number.MAX_SAFE_INTEGER} end
      from companies where changes_forgotten_seq > 0`.execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('changes_forgotten').execute();
}
