import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import type { Dialect } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { searchTablesOf } from '../db/erasure.ts';
import { LISTED_TABLES } from '../resources/index.ts';

/** A table's indexes, or its search table, about to be built. */
export interface IndexStep {
  name: 'indexes' | 'search';
  table: string;
}

/**
 * The tables whose indexes serve only the API (filters, sorts, search): those with a
 * paginated list. The importer looks records up by primary key and deletes children through
 * the child tables' own indexes, which stay.
 */
const DEFERRABLE_TABLES = LISTED_TABLES;

/** An index, trigger or search table set aside until the rows are in. */
interface SetAside {
  table: string;
  /** Statements that make it again, in order. */
  create: string[];
  /** SQLite FTS tables over `table` to fill again from it. */
  searchTables: string[];
}

/**
 * A first load builds the indexes of a table after its rows, not row by row: an index made
 * from a million sorted rows costs a fraction of a million random insertions into it (and
 * SQLite's trigram search tables are filled in one pass). Only tables that hold no row when
 * the import starts qualify, so an import into a populated database never rebuilds the
 * indexes of data it did not bring. Everything happens in the import's transaction: if the
 * import fails, the indexes are back as they were with the rest.
 *
 * While such an import runs, PostgreSQL readers of that table wait for its commit (dropping an
 * index locks the table); there is no data of any company in it to read yet. SQLite readers
 * keep reading the state before the import.
 */
export async function setIndexesAside(trx: Db, dialect: Dialect): Promise<SetAside[]> {
  const setAside: SetAside[] = [];
  for (const table of DEFERRABLE_TABLES) {
    if (!(await isEmpty(trx, table))) continue;
    if (dialect === 'sqlite') {
      setAside.push(await dropSqlite(trx, table));
    } else if (await lockedEmpty(trx, table)) {
      setAside.push(await dropPostgres(trx, table));
    }
  }
  return setAside;
}

/** PostgreSQL's answer to a lock asked for with NOWAIT that another transaction holds. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * PostgreSQL: takes the empty table's ACCESS EXCLUSIVE lock, which dropping its indexes needs,
 * only if no other transaction holds a lock on it and it is still empty; else leaves it as it
 * was, its indexes kept (the import is only slower). Two imports that both found a table empty
 * each held its ACCESS SHARE lock from that look, and each one's DROP INDEX waited for the
 * other's: a deadlock, and one of them failed. Under a savepoint, so a lock refused, or taken
 * for a table another import filled meanwhile, is given back at once.
 */
async function lockedEmpty(trx: Db, table: string): Promise<boolean> {
  await sql`savepoint set_indexes_aside`.execute(trx);
  try {
    await sql`lock table ${sql.table(table)} in access exclusive mode nowait`.execute(trx);
    if (await isEmpty(trx, table)) {
      await sql`release savepoint set_indexes_aside`.execute(trx);
      return true;
    }
  } catch (error) {
    if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
  }
  await sql`rollback to savepoint set_indexes_aside`.execute(trx);
  await sql`release savepoint set_indexes_aside`.execute(trx);
  return false;
}

/** Whether no table with a list holds a row: an import now is the database's first load. */
export async function holdsNoListedRows(db: Db): Promise<boolean> {
  for (const table of DEFERRABLE_TABLES) {
    if (!(await isEmpty(db, table))) return false;
  }
  return true;
}

async function isEmpty(db: Db, table: string): Promise<boolean> {
  const any = await sql`select 1 from ${sql.table(table)} limit 1`.execute(db);
  return any.rows.length === 0;
}

/** Whether `setIndexesAside` set every such table aside: each was empty in the transaction. */
export const setEveryTableAside = (setAside: readonly SetAside[]): boolean =>
  setAside.length === DEFERRABLE_TABLES.length;

/** Builds what `setIndexesAside` dropped, from the rows now in the tables. */
export async function rebuildIndexes(
  trx: Db,
  dialect: Dialect,
  setAside: SetAside[],
  onStep: (step: IndexStep) => void,
) {
  if (setAside.length === 0) return;
  if (dialect === 'postgres') {
    // Sorting for an index build happens in memory up to this much, then on disk.
    await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
  } else {
    // SQLite sorts an index's entries on helper threads too: the rows are all in, and nothing
    // else of the import runs meanwhile. The large bench import took 57–59 s with them against
    // 63–64 s without, in back-to-back runs.
    await sql.raw(`pragma threads = ${availableParallelism()}`).execute(trx);
  }
  try {
    for (const { table, create, searchTables } of setAside) {
      // A table the import left empty (an import of employees alone sets the leaves and
      // expenses aside too) gets its indexes back at once: nothing to say about it.
      const say = (await isEmpty(trx, table)) ? () => {} : onStep;
      // The search tables first: their rebuild leaves free pages for the indexes to fill.
      for (const fts of searchTables) {
        say({ name: 'search', table });
        await rebuildSearchTable(trx, fts);
      }
      say({ name: 'indexes', table });
      for (const statement of create) await sql.raw(statement).execute(trx);
    }
  } finally {
    if (dialect === 'sqlite') await sql`pragma threads = 0`.execute(trx);
  }
}

/**
 * FTS5 gathers the terms of the rows it indexes in memory and writes them as a segment when
 * they reach `hashsize` (1 MB by default); a rebuild from a million expenses with 32 MB wrote
 * far fewer segments: 2.0 s against 4.2 s.
 *
 * FTS5 also merges segments as they pile up: a few at a time after every write (`automerge`)
 * and, once a level holds `crisismerge` of them (16), all of that level at once. In a rebuild
 * every merge but the last is wasted, so both wait: the rebuild writes its segments (137 for
 * the bench file's 1.25 million expenses, 3.6–3.9 s) and one `optimize` merges them into one
 * (1.0 s), against 7.6–7.9 s and 20 segments left with FTS5's merging (a search reads every
 * segment). The unmerged segments' pages are free after the `optimize`: `rebuildIndexes`
 * fills the search tables before the indexes, which then take those pages. Past
 * REBUILD_CRISIS_MERGE segments a level is merged as it fills, so a far larger table never
 * nears FTS5's limit of 2,000 segments. The settings are stored with the table, so FTS5's
 * defaults are set back for the imports that follow, which add rows one by one.
 */
export const FTS_DEFAULTS = { hashsize: 1024 * 1024, automerge: 4, crisismerge: 16 } as const;
const REBUILD_HASH_BYTES = 32 * 1024 * 1024;
const REBUILD_CRISIS_MERGE = 200;

export async function rebuildSearchTable(
  trx: Db,
  fts: string,
  hashBytes = REBUILD_HASH_BYTES,
): Promise<void> {
  const set = (option: keyof typeof FTS_DEFAULTS, value: number) =>
    sql.raw(`insert into ${fts}(${fts}, rank) values ('${option}', ${value})`).execute(trx);
  await set('hashsize', hashBytes);
  await set('automerge', 0);
  await set('crisismerge', REBUILD_CRISIS_MERGE);
  await sql.raw(`insert into ${fts}(${fts}) values ('rebuild')`).execute(trx);
  await sql.raw(`insert into ${fts}(${fts}) values ('optimize')`).execute(trx);
  for (const [option, value] of Object.entries(FTS_DEFAULTS)) {
    await set(option as keyof typeof FTS_DEFAULTS, value);
  }
}

/**
 * SQLite: the table's own indexes (not those of its constraints, which have no SQL) and its
 * triggers, which keep the FTS search tables in step; those are rebuilt from the table.
 */
async function dropSqlite(trx: Db, table: string): Promise<SetAside> {
  const { rows } = await sql<{ type: 'index' | 'trigger'; name: string; sql: string }>`
    select type, name, sql from sqlite_master
    where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null
    order by type, name`.execute(trx);
  const searchTables = await searchTablesOf(trx, table);
  for (const { type, name } of rows) {
    await sql.raw(`drop ${type} ${name}`).execute(trx);
  }
  return { table, create: rows.map((row) => row.sql), searchTables };
}

/** PostgreSQL: every index of the table but those behind its primary key and constraints. */
async function dropPostgres(trx: Db, table: string): Promise<SetAside> {
  const { rows } = await sql<{ name: string; definition: string }>`
    select i.relname as name, pg_get_indexdef(i.oid) as definition
    from pg_index x join pg_class i on i.oid = x.indexrelid
    where x.indrelid = ${table}::regclass
      and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
    order by i.relname`.execute(trx);
  for (const { name } of rows) await sql`drop index ${sql.id(name)}`.execute(trx);
  return { table, create: rows.map((row) => row.definition), searchTables: [] };
}
