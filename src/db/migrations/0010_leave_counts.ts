import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file imports nothing from the app.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was.
type AnyDb = Kysely<any>;

/**
 * How many leaves each employee of a company has in each status, kept by the import (see
 * src/db/leave-counts.ts), so a leave search is counted as a sum over the employees it finds
 * rather than a count of their leaves. Filled here from the leaves already stored.
 */
export async function up(db: AnyDb): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = pg ? 'bigint' : 'integer';
  await db.schema
    .createTable('leave_counts')
    .addColumn('company_id', id, (c) => c.notNull().references('companies.id'))
    .addColumn('employee_id', id, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('leaves', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('leave_counts_pk', ['company_id', 'employee_id', 'status'])
    .execute();
  await sql`
    insert into leave_counts (company_id, employee_id, status, leaves)
    select company_id, employee_id, status, count(*) from leaves
    group by company_id, employee_id, status`.execute(db);
  // Statistics at once: without them PostgreSQL sums a few employees' rows by a full scan.
  await sql`analyze leave_counts`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('leave_counts').execute();
}
