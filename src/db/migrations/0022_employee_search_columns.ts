import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

const NAME = 'employees_id_list';
/** What the index carries besides its key (company, id), before and after. */
const CARRIED_BEFORE = ['status'];
const CARRIED = ['status', 'name_folded', 'number_folded'];

/**
 * The roster's index in id order (migration 0019) carries the two folded texts a search looks
 * in, so a search too short for the trigram indexes (one or two letters) is answered from the
 * index alone: its count, the roster page's walk in id order, and the employees a leave search
 * finds (`e.id … where name_folded like … or number_folded like …`, the subquery of its counts
 * and pages). PostgreSQL read every row of the table for them (45,000 employees of every
 * company, 19 ms for a two-letter count in the bench company of 20,000; from the index, 5 ms),
 * SQLite each of the company's rows by id (8.8 ms; from the index, 2.8–4.8 ms).
 *
 * Same name as before. PostgreSQL builds the new index under another name and swaps it in
 * (dropping an index locks its table against reads until the migration commits, so the drop
 * comes after the build); SQLite, which cannot rename an index, drops and makes it in one
 * transaction, and readers see the old schema until the commit.
 */
async function remake(db: AnyDb, carried: string[]): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const create = (trx: AnyDb, name: string) => {
    const carriedColumns = sql.join(carried.map((column) => sql.ref(column)));
    return (
      pg
        ? sql`create index ${sql.id(name)} on employees (company_id, id) include (${carriedColumns})`
        : sql`create index ${sql.id(name)} on employees (company_id, id, ${carriedColumns})`
    ).execute(trx);
  };
  if (!pg) {
    // Kysely runs SQLite's migrations outside a transaction.
    await db.transaction().execute(async (trx) => {
      await trx.schema.dropIndex(NAME).execute();
      await create(trx, NAME);
      // SQLite drops an index's statistics with it. Where an import gathered them, they are
      // gathered again for this index alone (from at most 1,000 rows, as the import does), so
      // the planner does not weigh it by its defaults against the other indexes' measured ones.
      const { rows } = await sql`select 1 from sqlite_master where name = 'sqlite_stat1'`.execute(
        trx,
      );
      if (rows.length > 0) {
        await sql`pragma analysis_limit = 1000`.execute(trx);
        await sql`analyze ${sql.id(NAME)}`.execute(trx);
      }
    });
    return;
  }
  await create(db, `${NAME}_new`);
  await db.schema.dropIndex(NAME).execute();
  await sql`alter index ${sql.id(`${NAME}_new`)} rename to ${sql.id(NAME)}`.execute(db);
}

export async function up(db: AnyDb): Promise<void> {
  await remake(db, CARRIED);
}

export async function down(db: AnyDb): Promise<void> {
  await remake(db, CARRIED_BEFORE);
}
