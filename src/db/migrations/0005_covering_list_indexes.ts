import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * Every index a list is read through carries every column its filters test, so a list page,
 * its total and its page anchors are read from the index alone, whatever the filters: a walk
 * in `created_at` order that keeps only cancelled leaves of one type tests each entry without
 * reading its row (reading the rows made such a walk over a million leaves take over a second).
 * The indexes of the range filters (`start_date`, `expense_date`, `updated_at`) carry every
 * sort column too, so a date window sorted by another column is gathered from the index alone.
 *
 * Key columns: company, the sort column, the id (the tie-breaker); the others ride along
 * (PostgreSQL: `include`, out of the key; SQLite has no such clause, so they are key columns
 * that never decide an order).
 */
const INDEXES: Array<[table: string, name: string, key: string[], carried: string[]]> = [
  [
    'leaves',
    'leaves_id_list',
    ['id'],
    ['status', 'leave_type_id', 'employee_id', 'start_date', 'end_date', 'updated_at'],
  ],
  [
    'leaves',
    'leaves_start_date_list',
    ['start_date', 'id'],
    ['end_date', 'status', 'leave_type_id', 'employee_id', 'created_at', 'updated_at'],
  ],
  [
    'leaves',
    'leaves_end_date_list',
    ['end_date', 'id'],
    ['start_date', 'status', 'leave_type_id', 'employee_id', 'updated_at'],
  ],
  [
    'leaves',
    'leaves_created_at_list',
    ['created_at', 'id'],
    ['status', 'leave_type_id', 'employee_id', 'start_date', 'end_date', 'updated_at'],
  ],
  [
    'leaves',
    'leaves_updated_at_list',
    ['updated_at', 'id'],
    ['status', 'leave_type_id', 'employee_id', 'start_date', 'end_date', 'created_at'],
  ],
  [
    'expenses',
    'expenses_id_list',
    ['id'],
    ['status', 'category_id', 'employee_id', 'expense_date', 'updated_at'],
  ],
  [
    'expenses',
    'expenses_expense_date_list',
    ['expense_date', 'id'],
    ['status', 'category_id', 'employee_id', 'amount_e4', 'created_at', 'updated_at'],
  ],
  [
    'expenses',
    'expenses_amount_e4_list',
    ['amount_e4', 'id'],
    ['status', 'category_id', 'employee_id', 'expense_date', 'updated_at'],
  ],
  [
    'expenses',
    'expenses_created_at_list',
    ['created_at', 'id'],
    ['status', 'category_id', 'employee_id', 'expense_date', 'updated_at'],
  ],
  [
    'expenses',
    'expenses_updated_at_list',
    ['updated_at', 'id'],
    ['status', 'category_id', 'employee_id', 'expense_date', 'amount_e4', 'created_at'],
  ],
];

/** The indexes they replace, each as it was made (migrations 0001 and 0003). */
const REPLACED: Array<[table: string, name: string, columns: string[]]> = [
  ['leaves', 'leaves_status_id', ['company_id', 'status', 'id']],
  [
    'leaves',
    'leaves_start_date_id_covering',
    ['company_id', 'start_date', 'id', 'end_date', 'status', 'leave_type_id'],
  ],
  ['leaves', 'leaves_end_date_id', ['company_id', 'end_date', 'id']],
  ['leaves', 'leaves_created_at_id', ['company_id', 'created_at', 'id']],
  ['leaves', 'leaves_updated_at_id', ['company_id', 'updated_at', 'id']],
  ['expenses', 'expenses_status_id', ['company_id', 'status', 'id']],
  [
    'expenses',
    'expenses_expense_date_id_covering',
    ['company_id', 'expense_date', 'id', 'category_id', 'status', 'amount_e4'],
  ],
  ['expenses', 'expenses_amount_e4_id', ['company_id', 'amount_e4', 'id']],
  ['expenses', 'expenses_created_at_id', ['company_id', 'created_at', 'id']],
  ['expenses', 'expenses_updated_at_id', ['company_id', 'updated_at', 'id']],
];

export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const [table, name, key, carried] of INDEXES) {
    const keyColumns = sql.join(['company_id', ...key].map((column) => sql.ref(column)));
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    await (pg
      ? sql`create index ${sql.id(name)} on ${sql.table(table)} (${keyColumns}) include (${carriedColumns})`
      : sql`create index ${sql.id(name)} on ${sql.table(table)} (${keyColumns}, ${carriedColumns})`
    ).execute(db);
  }
  for (const [, name] of REPLACED) await db.schema.dropIndex(name).execute();
}

export async function down(db: AnyDb): Promise<void> {
  for (const [table, name, columns] of REPLACED) {
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
  for (const [, name] of INDEXES) await db.schema.dropIndex(name).execute();
}
