import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

const NAME = 'leaves_employee_id_id';
/** What the index carries besides its key (company, employee, id) after this migration. */
const CARRIED = ['status', 'leave_type_id', 'start_date', 'end_date', 'created_at', 'updated_at'];

/**
 * PostgreSQL: the index of each employee's leaves carries every column a leave list filters or
 * sorts by, as migration 0005 made the other list indexes carry them. A leave search finds
 * employees (by name or personnel number) and reads their leaves through this index; with a
 * status, a window or an `updated_since`, each entry's row was read to test it, or the planner
 * walked the filter's own index past every other employee's leaves instead. The count of the
 * leaves of the 422 employees `Çelik` finds, within an `updated_since`, took 184–191 ms the
 * first time (the pages outside PostgreSQL's buffers), and 27–32 ms from this index alone
 * (docs/performance.md, item 102). Lists of a few employees read theirs the same way.
 *
 * SQLite keeps the plain index: its searches met their targets without it, and every column
 * carried would slow its import, whose speed is a target.
 *
 * Same name as before (SQLite's `indexed by` names it). Built under another name and swapped
 * in, as migration 0022 did: dropping an index locks its table against reads until the
 * migration commits, so the drop comes after the build.
 */
export async function up(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const carried = sql.join(CARRIED.map((column) => sql.ref(column)));
  await sql`create index ${sql.id(`${NAME}_new`)} on leaves (company_id, employee_id, id) include (${carried})`.execute(
    db,
  );
  await swapIn(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create index ${sql.id(`${NAME}_new`)} on leaves (company_id, employee_id, id)`.execute(
    db,
  );
  await swapIn(db);
}

async function swapIn(db: AnyDb): Promise<void> {
  await db.schema.dropIndex(NAME).execute();
  await sql`alter index ${sql.id(`${NAME}_new`)} rename to ${sql.id(NAME)}`.execute(db);
}
