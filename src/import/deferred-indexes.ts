import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import type { Dialect } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
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
    const any = await sql`select 1 from ${sql.table(table)} limit 1`.execute(trx);
    if (any.rows.length > 0) continue;
    setAside.push(
      dialect === 'sqlite' ? await dropSqlite(trx, table) : await dropPostgres(trx, table),
    );
  }
  return setAside;
}

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
      onStep({ name: 'indexes', table });
      for (const statement of create) await sql.raw(statement).execute(trx);
      for (const fts of searchTables) {
        onStep({ name: 'search', table });
        await rebuildSearchTable(trx, fts);
      }
    }
  } finally {
    if (dialect === 'sqlite') await sql`pragma threads = 0`.execute(trx);
  }
}

/**
 * FTS5 gathers the terms of the rows it indexes in memory and writes them as a segment when
 * they reach `hashsize` (1 MB by default); the segments are merged as they pile up. A rebuild
 * from a million expenses with 32 MB wrote far fewer segments to merge: 2.0 s against 4.2 s.
 * The setting is stored with the table, so it is set back for the imports that follow.
 */
const REBUILD_HASH_BYTES = 32 * 1024 * 1024;
const DEFAULT_HASH_BYTES = 1024 * 1024;

async function rebuildSearchTable(trx: Db, fts: string): Promise<void> {
  const hashsize = (bytes: number) =>
    sql.raw(`insert into ${fts}(${fts}, rank) values ('hashsize', ${bytes})`).execute(trx);
  await hashsize(REBUILD_HASH_BYTES);
  await sql.raw(`insert into ${fts}(${fts}) values ('rebuild')`).execute(trx);
  await hashsize(DEFAULT_HASH_BYTES);
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
  const search = await sql<{ name: string }>`
    select name from sqlite_master
    where type = 'table' and sql like 'create virtual table%' and sql like ${`%content='${table}'%`}`.execute(
    trx,
  );
  for (const { type, name } of rows) {
    await sql.raw(`drop ${type} ${name}`).execute(trx);
  }
  return {
    table,
    create: rows.map((row) => row.sql),
    searchTables: search.rows.map((row) => row.name),
  };
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
