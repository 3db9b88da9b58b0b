import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * PostgreSQL: beside the indexes on each folded text of expenses keyed by the expense date
 * (migration 0021), the same keyed by `updated_at`, carrying the same columns (the expense date
 * in place of `updated_at`). A search within an `updated_since` then reads each of its texts'
 * entries in the bounds alone, as a search within a window does, where it read every entry of
 * its texts and tested `updated_at` in each: the bench company's `search=ar` (17 texts, which
 * 324,240 expenses carry) within its last two months (9,605 matches) was counted in 138 ms and
 * each page read in 111 ms, every time; 6–8 ms through these (docs/performance.md, item 105).
 *
 * SQLite goes without them: every index of expenses slows its import, whose speed is a target,
 * by 1–2 s each for the bench company's million expenses.
 *
 * Built while reads go on (a plain `create index` only holds writers off, and an import waits
 * for it).
 */
const INDEXES: Array<[name: string, key: string, carried: string[]]> = [
  [
    'expenses_title_folded_updated',
    'title_folded',
    ['status', 'category_id', 'amount_e4', 'created_at', 'expense_date'],
  ],
  [
    'expenses_merchant_folded_updated',
    'merchant_folded',
    ['title_folded', 'status', 'category_id', 'amount_e4', 'created_at', 'expense_date'],
  ],
];

export async function up(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const [name, key, carried] of INDEXES) {
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    await sql`create index ${sql.id(name)} on expenses (company_id, ${sql.ref(key)}, updated_at, id) include (${carriedColumns})`.execute(
      db,
    );
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
}
