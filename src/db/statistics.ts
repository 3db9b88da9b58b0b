import { sql } from 'kysely';
import type { DatabaseHandle } from './connect.ts';

/**
 * Refreshes the query planner's statistics after an import changed the data (on PostgreSQL,
 * of `tables`: those the import writes). Without them SQLite cannot tell that one employee's
 * leaves are few among a million, and walks the whole company in id order instead of reading
 * them through the employee index. SQLite samples at most 1,000 rows of each index
 * (approximate, and quick on any size). PostgreSQL samples its usual 30,000 rows a table
 * instead of waiting for autovacuum to notice, and VACUUM marks the new rows all-visible:
 * until then an index-only scan reads the heap for every row, which made a deep page's first
 * pass over a million expenses 3.5 s instead of 0.3 s. Pages already all-visible are skipped,
 * so a small import into large tables stays quick.
 */
export async function refreshPlannerStatistics(
  handle: DatabaseHandle,
  tables: readonly string[],
): Promise<void> {
  if (handle.dialect === 'sqlite') {
    await sql`pragma analysis_limit = 1000`.execute(handle.db);
    await sql`analyze`.execute(handle.db);
    return;
  }
  await sql`vacuum (analyze) ${sql.join(tables.map((table) => sql.table(table)))}`.execute(
    handle.db,
  );
}
