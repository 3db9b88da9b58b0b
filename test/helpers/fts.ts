import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/** How many segments an FTS5 table's index is in: each has its leaf pages listed in `_idx`. */
export async function segmentsOf(db: Db, fts: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(distinct segid) as n from ${sql.table(`${fts}_idx`)}`.execute(db);
  return Number(rows[0]?.n);
}

/** An FTS5 table's stored settings (its `_config` rows but the format version). */
export async function settingsOf(db: Db, fts: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ k: string; v: number }>`
    select k, v from ${sql.table(`${fts}_config`)} where k <> 'version' order by k`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.k, Number(row.v)]));
}
