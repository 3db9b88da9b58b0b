import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sql } from 'kysely';
import type { Dialect } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { IMPORTED_TABLES } from '../../src/resources/index.ts';

/** Every table an import writes, and the keys. */
const TABLES = ['api_keys', ...IMPORTED_TABLES] as const;

/** Every row of every table, in a stable order: equal snapshots mean an unchanged database. */
export async function snapshotDatabase(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const key = table === 'receipts' ? 'expense_id' : 'id';
    out[table] = await db.selectFrom(table).selectAll().orderBy(key).execute();
  }
  return out;
}

/** Every file below dir, as sorted relative paths. */
export function listFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (current: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(dir, path));
    }
  };
  walk(dir);
  return files.sort();
}

/**
 * The database's indexes, triggers and tables with their definitions (SQLite) or its indexes
 * (PostgreSQL): equal snapshots mean the same schema.
 */
export async function snapshotSchema(db: Db, dialect: Dialect): Promise<unknown[]> {
  const query =
    dialect === 'sqlite'
      ? sql`select type, name, tbl_name, sql from sqlite_master
            where name not like 'sqlite_%' order by type, name`
      : sql`select tablename, indexname, indexdef from pg_indexes
            where schemaname = current_schema() order by indexname`;
  const { rows } = await query.execute(db);
  return rows;
}
