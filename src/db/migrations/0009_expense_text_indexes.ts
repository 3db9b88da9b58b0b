import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * An index on each folded text of expenses, carrying every sort column and the filters a
 * search is read with (status, category), so a search's matches are read from the indexes
 * alone: a search stands for the few distinct texts that contain it (`expense_texts`), and the
 * rows holding one of them are an equality look-up in these. Through the trigram indexes the
 * same matches were found without their sort values, which cost a read of every matching row
 * (104,740 expenses of "hava" sorted by amount: 318 ms on SQLite against 25 ms here). The
 * merchant index carries the title, so the rows whose title already matched are left out.
 *
 * Key columns: company, the text, the id; the others ride along (PostgreSQL: `include`).
 */
export const INDEXES: Array<[name: string, key: string[], carried: string[]]> = [
  [
    'expenses_title_folded_list',
    ['title_folded', 'id'],
    ['status', 'category_id', 'expense_date', 'amount_e4', 'created_at', 'updated_at'],
  ],
  [
    'expenses_merchant_folded_list',
    ['merchant_folded', 'id'],
    [
      'title_folded',
      'status',
      'category_id',
      'expense_date',
      'amount_e4',
      'created_at',
      'updated_at',
    ],
  ],
];

export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const [name, key, carried] of INDEXES) {
    const keyColumns = sql.join(['company_id', ...key].map((column) => sql.ref(column)));
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    await (pg
      ? sql`create index ${sql.id(name)} on expenses (${keyColumns}) include (${carriedColumns})`
      : sql`create index ${sql.id(name)} on expenses (${keyColumns}, ${carriedColumns})`
    ).execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
}
