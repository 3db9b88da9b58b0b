import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * PostgreSQL's plan of `query`, with the planner methods `off` (`enable_seqscan`, …) turned off
 * on the connection that explains it, and set back after: on a test's few rows the planner
 * would scan the table or sort; what a test asserts is which index it reads once it walks one.
 */
export function postgresPlan(
  db: Db,
  query: CompiledQuery,
  off: readonly string[],
): Promise<string> {
  return db.connection().execute(async (connection) => {
    for (const setting of off) await sql.raw(`set ${setting} = off`).execute(connection);
    try {
      const { rows } = await connection.executeQuery<{ 'QUERY PLAN': string }>(
        CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await sql`reset all`.execute(connection);
    }
  });
}
