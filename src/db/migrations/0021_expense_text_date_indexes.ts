import { type Kysely, PostgresAdapter, sql } from 'kysely';
// As migration 0009 made them: what `down` makes again.
import { INDEXES as REPLACED } from './0009_expense_text_indexes.ts';

// Frozen in time: this file imports nothing from the app (0009 is frozen too).

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * The indexes on each folded text of expenses (migration 0009) keyed by the expense date after
 * the text: a search within a date window reads each of its texts' entries in the window alone,
 * not every entry of the text and the date tested in the index (a one-letter search in a
 * quarter: 64 texts, 23,290 matches among 941,000 entries, 555–680 ms on SQLite; 26–31 ms
 * keyed by the date). A search without a window reads every entry of its texts either way.
 *
 * Same names as before: on SQLite the list queries name the indexes they read (`indexed by`),
 * and instances of the release before go on naming these. The same columns ride along.
 */
const INDEXES: Array<[name: string, key: string[], carried: string[]]> = [
  [
    'expenses_title_folded_list',
    ['title_folded', 'expense_date', 'id'],
    ['status', 'category_id', 'amount_e4', 'created_at', 'updated_at'],
  ],
  [
    'expenses_merchant_folded_list',
    ['merchant_folded', 'expense_date', 'id'],
    ['title_folded', 'status', 'category_id', 'amount_e4', 'created_at', 'updated_at'],
  ],
];

/**
 * Each index made anew under its name. PostgreSQL builds the new ones under other names first
 * and then swaps them in: dropping an index locks its table against reads until the migration
 * commits, so the drops come after both builds (reads wait for that instant, not for a build).
 * SQLite, which cannot rename an index, drops and makes both in one transaction; readers see the
 * old schema until the commit.
 */
async function remake(db: AnyDb, indexes: typeof INDEXES): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const create = (trx: AnyDb, name: string, key: string[], carried: string[]) => {
    const keyColumns = sql.join(['company_id', ...key].map((column) => sql.ref(column)));
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    return (
      pg
        ? sql`create index ${sql.id(name)} on expenses (${keyColumns}) include (${carriedColumns})`
        : sql`create index ${sql.id(name)} on expenses (${keyColumns}, ${carriedColumns})`
    ).execute(trx);
  };
  if (!pg) {
    // Kysely runs SQLite's migrations outside a transaction.
    await db.transaction().execute(async (trx) => {
      for (const [name, key, carried] of indexes) {
        await trx.schema.dropIndex(name).execute();
        await create(trx, name, key, carried);
      }
    });
    return;
  }
  for (const [name, key, carried] of indexes) await create(db, `${name}_new`, key, carried);
  for (const [name] of indexes) {
    await db.schema.dropIndex(name).execute();
    await sql`alter index ${sql.id(`${name}_new`)} rename to ${sql.id(name)}`.execute(db);
  }
}

export async function up(db: AnyDb): Promise<void> {
  await remake(db, INDEXES);
}

export async function down(db: AnyDb): Promise<void> {
  await remake(db, REPLACED);
}
