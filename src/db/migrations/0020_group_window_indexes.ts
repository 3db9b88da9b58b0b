import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * PostgreSQL only: a date window that keeps some leave types or expense categories is gathered
 * from an index keyed by the type or category, then the date. Through the date index alone
 * (migration 0005), which carries the type but not first, a year of one leave type read every
 * leave of the year and kept one in twenty (148,000 entries for 5,600 on the bench company,
 * 187 ms with a parallel scan; 3–6 ms through this index), and a year of one category with two
 * statuses 107,000 for 9,100 (48 ms; 12 ms). Each carries what the date index carries, so any
 * sort of the window is read from the index alone.
 *
 * Not on SQLite: there the same two took 4 s of a 76 s first load of the bench file (whose
 * 50,000 records/s target slower machines already miss) and the same window requests gained
 * little, SQLite testing the date index's carried columns cheaply (docs/performance.md, item 81).
 */
const INDEXES: Array<[table: string, name: string, key: string[], carried: string[]]> = [
  [
    'leaves',
    'leaves_leave_type_start_date_list',
    ['leave_type_id', 'start_date', 'id'],
    ['end_date', 'status', 'employee_id', 'created_at', 'updated_at'],
  ],
  [
    'expenses',
    'expenses_category_expense_date_list',
    ['category_id', 'expense_date', 'id'],
    ['status', 'employee_id', 'amount_e4', 'created_at', 'updated_at'],
  ],
];

const onPostgres = (db: AnyDb) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: AnyDb): Promise<void> {
  if (!onPostgres(db)) return;
  for (const [table, name, key, carried] of INDEXES) {
    const keyColumns = sql.join(['company_id', ...key].map((column) => sql.ref(column)));
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    await sql`create index ${sql.id(name)} on ${sql.table(table)} (${keyColumns}) include (${carriedColumns})`.execute(
      db,
    );
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (!onPostgres(db)) return;
  for (const [, name] of INDEXES) await db.schema.dropIndex(name).execute();
}
