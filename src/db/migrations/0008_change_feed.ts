import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/** The record tables the change feed follows. */
const FOLLOWED = ['employees', 'leave_types', 'leaves', 'expense_categories', 'expenses'];

/**
 * The change feed (GET /changes) and deletions:
 * - `companies.change_seq` counts each company's imports; an import takes the next number for
 *   every company it writes, under the company row's lock, so numbers follow commit order.
 * - Every record row carries the `change_seq` of the import that last changed it, indexed
 *   per company for the feed.
 * - `change_commits` holds each number's commit time, for the imports that changed something.
 * - `deleted_records` remembers deletions (one row a record) until they are forgotten;
 *   `companies.changes_forgotten_seq` is the newest number forgotten.
 * - `children_digest` on leaves and expenses stands for their attachments, items and receipt,
 *   so a change to those alone changes the row.
 * - Employees gain `updated_at`. The rows already stored get number 0, and this migration's
 *   time as their `updated_at` and their feed's `changed_at`.
 */
export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = pg ? 'bigint' : 'integer';
  const timestamp = pg ? 'timestamptz' : 'text';
  await db.schema
    .alterTable('companies')
    .addColumn('change_seq', id, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('companies')
    .addColumn('changes_forgotten_seq', id, (c) => c.notNull().defaultTo(0))
    .execute();
  for (const table of FOLLOWED) {
    await db.schema
      .alterTable(table)
      .addColumn('change_seq', id, (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex(`${table}_change_seq`)
      .on(table)
      .columns(['company_id', 'change_seq', 'id'])
      .execute();
  }
  for (const table of ['leaves', 'expenses']) {
    await db.schema.alterTable(table).addColumn('children_digest', 'text').execute();
  }
  // A deleted employee may still be a leave's substitute: counted through this index.
  await db.schema
    .createIndex('leaves_substitute')
    .on('leaves')
    .columns(['company_id', 'substitute_employee_id'])
    .execute();
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await db.schema.alterTable('employees').addColumn('updated_at', timestamp).execute();
  await db
    .updateTable('employees')
    .set({ updated_at: pg ? sql`${now}::timestamptz` : now })
    .execute();
  await db.schema
    .createIndex('employees_updated_at')
    .on('employees')
    .columns(['company_id', 'updated_at', 'id'])
    .execute();
  await db.schema
    .createTable('change_commits')
    .addColumn('company_id', id, (c) => c.notNull())
    .addColumn('change_seq', id, (c) => c.notNull())
    .addColumn('committed_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('change_commits_pk', ['company_id', 'change_seq'])
    .execute();
  // The records already stored carry number 0: changed, for the feed, when this migration ran.
  await db
    .insertInto('change_commits')
    .columns(['company_id', 'change_seq', 'committed_at'])
    .expression(
      db
        .selectFrom('companies')
        .select([
          'id',
          sql.lit(0).as('change_seq'),
          (pg ? sql`${now}::timestamptz` : sql`${now}`).as('committed_at'),
        ]),
    )
    .execute();
  await db.schema
    .createTable('deleted_records')
    .addColumn('company_id', id, (c) => c.notNull())
    .addColumn('resource', 'integer', (c) => c.notNull())
    .addColumn('record_id', id, (c) => c.notNull())
    .addColumn('change_seq', id, (c) => c.notNull())
    .addPrimaryKeyConstraint('deleted_records_pk', ['company_id', 'resource', 'record_id'])
    .execute();
  await db.schema
    .createIndex('deleted_records_change_seq')
    .on('deleted_records')
    .columns(['company_id', 'change_seq', 'resource', 'record_id'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('deleted_records').execute();
  await db.schema.dropTable('change_commits').execute();
  await db.schema.dropIndex('employees_updated_at').execute();
  await db.schema.dropIndex('leaves_substitute').execute();
  await db.schema.alterTable('employees').dropColumn('updated_at').execute();
  for (const table of ['leaves', 'expenses']) {
    await db.schema.alterTable(table).dropColumn('children_digest').execute();
  }
  for (const table of FOLLOWED) {
    await db.schema.dropIndex(`${table}_change_seq`).execute();
    await db.schema.alterTable(table).dropColumn('change_seq').execute();
  }
  await db.schema.alterTable('companies').dropColumn('changes_forgotten_seq').execute();
  await db.schema.alterTable('companies').dropColumn('change_seq').execute();
}
