import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * Every index a roster page is read through carries the employee's status, as migration 0005
 * made the leaves' and expenses' list indexes carry their filters: a page of a status filter
 * sorted by another column walks the sort column's index past every employee before the page
 * (an offset), and without the status in the index each of them cost a read of its row (8 ms
 * for page 110 of 100 active or terminated employees by hire date in a roster of 20,000 on
 * PostgreSQL, 12,012 pages read; from the index alone, 63).
 *
 * Key columns: company, the sort column, the id (the tie-breaker); the status rides along
 * (PostgreSQL: `include`, out of the key; SQLite has no such clause, so it is a key column that
 * never decides an order). The id order gets an index of its own: the unique constraint on
 * (company_id, id) stays, as the key the other tables' foreign keys name.
 */
const INDEXES: Array<[name: string, key: string[]]> = [
  ['employees_id_list', ['id']],
  ['employees_name_folded_list', ['name_folded', 'id']],
  ['employees_number_folded_list', ['number_folded', 'id']],
  ['employees_hire_date_list', ['hire_date', 'id']],
  ['employees_updated_at_list', ['updated_at', 'id']],
];

/** The indexes they replace, each as it was made (migrations 0001 and 0008). */
const REPLACED: Array<[name: string, columns: string[]]> = [
  ['employees_name_folded_id', ['company_id', 'name_folded', 'id']],
  ['employees_number_folded_id', ['company_id', 'number_folded', 'id']],
  ['employees_hire_date_id', ['company_id', 'hire_date', 'id']],
  ['employees_updated_at', ['company_id', 'updated_at', 'id']],
];

export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const [name, key] of INDEXES) {
    const keyColumns = sql.join(['company_id', ...key].map((column) => sql.ref(column)));
    await (pg
      ? sql`create index ${sql.id(name)} on employees (${keyColumns}) include (status)`
      : sql`create index ${sql.id(name)} on employees (${keyColumns}, status)`
    ).execute(db);
  }
  for (const [name] of REPLACED) await db.schema.dropIndex(name).execute();
}

export async function down(db: AnyDb): Promise<void> {
  for (const [name, columns] of REPLACED) {
    await db.schema.createIndex(name).on('employees').columns(columns).execute();
  }
  for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
}
