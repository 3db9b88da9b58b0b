import type { Kysely } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * The date indexes carry the columns the usual filters test, so a date-range list (a quarter
 * of a million leaves or expenses) is answered from the index alone, without a table lookup
 * per row in the range. The leading columns are unchanged: sorting by the date still uses
 * them.
 */
const REPLACED: Array<[table: string, old: string, name: string, columns: string[]]> = [
  [
    'leaves',
    'leaves_start_date_id',
    'leaves_start_date_id_covering',
    ['company_id', 'start_date', 'id', 'end_date', 'status', 'leave_type_id'],
  ],
  [
    'expenses',
    'expenses_expense_date_id',
    'expenses_expense_date_id_covering',
    ['company_id', 'expense_date', 'id', 'category_id', 'status', 'amount_e4'],
  ],
];

export async function up(db: AnyDb): Promise<void> {
  for (const [table, old, name, columns] of REPLACED) {
    await db.schema.createIndex(name).on(table).columns(columns).execute();
    await db.schema.dropIndex(old).execute();
  }
}

export async function down(db: AnyDb): Promise<void> {
  for (const [table, old, name, columns] of REPLACED) {
    await db.schema.createIndex(old).on(table).columns(columns.slice(0, 3)).execute();
    await db.schema.dropIndex(name).execute();
  }
}
