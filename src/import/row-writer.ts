import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { RECORD_TYPES } from '../resources/index.ts';
import { columnValues, rowCount, type TableRows } from './rows.ts';

/**
 * Writes the importer's rows; `upsert` replaces a stored row with the same id.
 *
 * The statements are made once per table and reused for every batch of the import: building
 * and compiling a new multi-row statement per batch cost as much as SQLite's own work.
 */
export interface RowWriter {
  /** Returns how many rows it inserted or changed (an upsert of equal values changes none). */
  write(table: string, rows: TableRows, mode: 'insert' | 'upsert'): Promise<number>;
  /** The stored rows among `ids` of a tenant table, with the company each belongs to. */
  owners(table: string, ids: readonly number[]): Promise<Owner[]>;
}

export interface Owner {
  id: number;
  company_id: number;
}

/** A writer for `trx`, the import's transaction on `handle`. */
export function rowWriter(handle: DatabaseHandle, trx: Db): RowWriter {
  return handle.dialect === 'sqlite'
    ? new SqliteRowWriter(handle.sqlite)
    : new PostgresRowWriter(trx);
}

/**
 * Replaces the stored row with the same id, but only when a value differs: a re-import of
 * unchanged records rewrites nothing, so their indexes and search entries are left as they
 * are. `distinct` is the dialect's null-safe "differs" (SQLite `is not`, PostgreSQL `is
 * distinct from`), which sees a change from or to null. Re-importing the whole bench file into
 * the SQLite database that held it took 23.7 s with this; without, it was stopped unfinished
 * after 15 minutes.
 *
 * A row whose served columns are as stored, and only unserved ones (an employee's salary)
 * differ, is updated with its change marks kept (`RecordTypeDescriptor.unserved`).
 */
function upsertClause(table: string, columns: readonly string[], distinct: string): string {
  const updated = columns.filter((column) => column !== 'id');
  // What marks the change is not one: the import's number, the time an employee changed.
  const compared = updated.filter((column) => !marksChange(table, column));
  const differ = (of: readonly string[]) =>
    `(${of.map((column) => `${table}.${column}`).join(', ')}) ${distinct} (${of.map((column) => `excluded.${column}`).join(', ')})`;
  const unserved = UNSERVED.get(table);
  const served = unserved ? compared.filter((column) => !unserved.has(column)) : compared;
  const set = updated
    .map((column) =>
      served.length < compared.length && marksChange(table, column)
        ? `${column} = case when ${differ(served)} then excluded.${column} else ${table}.${column} end`
        : `${column} = excluded.${column}`,
    )
    .join(', ');
  return ` on conflict (id) do update set ${set} where ${differ(compared)}`;
}

/** Per table, the columns no answer contains (`RecordTypeDescriptor.unserved`). */
const UNSERVED: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  RECORD_TYPES.flatMap((d) =>
    d.unserved.length > 0 ? [[d.table, new Set<string>(d.unserved)] as const] : [],
  ),
);

/**
 * Whether a column marks a change rather than being one, so an upsert sets it without comparing
 * it: the import's number (change_seq), and an employee's `updated_at`, which is the import's
 * time unless the record gives one, so a new import of unchanged values leaves the employee as
 * it was.
 */
const marksChange = (table: string, column: string) =>
  column === 'change_seq' || (table === 'employees' && column === 'updated_at');

/** Rows per SQLite statement: binding 100 rows at once costs half what 100 calls do. */
const SQLITE_ROWS_PER_STATEMENT = 100;

/**
 * SQLite: per table, one prepared statement for SQLITE_ROWS_PER_STATEMENT rows and one for a
 * single row (the rest of a batch), bound by position. better-sqlite3 is synchronous and this
 * is Kysely's connection, so the rows join the import's transaction.
 */
class SqliteRowWriter implements RowWriter {
  private readonly statements = new Map<string, SqliteDatabase.Statement>();

  private readonly sqlite: SqliteDatabase.Database;

  constructor(sqlite: SqliteDatabase.Database) {
    this.sqlite = sqlite;
  }

  async write(table: string, rows: TableRows, mode: 'insert' | 'upsert'): Promise<number> {
    const count = rowCount(rows);
    if (count === 0) return 0;
    const { columns, values } = rows;
    const width = columns.length;
    let start = 0;
    let changed = 0;
    if (count >= SQLITE_ROWS_PER_STATEMENT) {
      const many = this.statement(table, columns, mode, SQLITE_ROWS_PER_STATEMENT);
      for (; start + SQLITE_ROWS_PER_STATEMENT <= count; start += SQLITE_ROWS_PER_STATEMENT) {
        changed += many.run(
          values.slice(start * width, (start + SQLITE_ROWS_PER_STATEMENT) * width),
        ).changes;
      }
    }
    const one = this.statement(table, columns, mode, 1);
    for (; start < count; start++) {
      changed += one.run(values.slice(start * width, (start + 1) * width)).changes;
    }
    return changed;
  }

  async owners(table: string, ids: readonly number[]): Promise<Owner[]> {
    const key = `owners ${table}`;
    let statement = this.statements.get(key);
    if (!statement) {
      // All ids in one parameter: one statement, whatever the batch's size.
      statement = this.sqlite.prepare(
        `select id, company_id from ${table} where id in (select value from json_each(?))`,
      );
      this.statements.set(key, statement);
    }
    return statement.all(JSON.stringify(ids)) as Owner[];
  }

  private statement(
    table: string,
    columns: readonly string[],
    mode: 'insert' | 'upsert',
    rowsPerStatement: number,
  ): SqliteDatabase.Statement {
    const key = `${mode} ${table} ${columns} ${rowsPerStatement}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      const text = `insert into ${table} (${columns.join(', ')}) values ${Array(rowsPerStatement).fill(tuple).join(', ')}`;
      statement = this.sqlite.prepare(
        mode === 'upsert' ? text + upsertClause(table, columns, 'is not') : text,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }
}

/**
 * PostgreSQL: one statement per table and batch that takes each column as an array
 * (`insert … select * from unnest($1::bigint[], …)`), so the text never changes with the
 * number of rows and the server parses one parameter a column instead of one a value.
 */
class PostgresRowWriter implements RowWriter {
  private readonly texts = new Map<string, string>();

  private readonly trx: Db;

  constructor(trx: Db) {
    this.trx = trx;
  }

  async write(table: string, rows: TableRows, mode: 'insert' | 'upsert'): Promise<number> {
    if (rowCount(rows) === 0) return 0;
    const { columns } = rows;
    const key = `${mode} ${table} ${columns}`;
    let text = this.texts.get(key);
    if (!text) {
      const types = await this.columnTypes(table);
      const arrays = columns.map((column, i) => `$${i + 1}::${types.get(column)}[]`);
      text = `insert into ${table} (${columns.join(', ')}) select * from unnest(${arrays.join(', ')})`;
      if (mode === 'upsert') text += upsertClause(table, columns, 'is distinct from');
      this.texts.set(key, text);
    }
    const values = columns.map((column) => columnValues(rows, column));
    const result = await this.trx.executeQuery(CompiledQuery.raw(text, values));
    return Number(result.numAffectedRows ?? 0);
  }

  async owners(table: string, ids: readonly number[]): Promise<Owner[]> {
    const { rows } = await this.trx.executeQuery<Owner>(
      CompiledQuery.raw(`select id, company_id from ${table} where id = any($1::bigint[])`, [ids]),
    );
    return rows;
  }

  /** Column name → its type as SQL spells it (`bigint`, `text`, `timestamp with time zone`…). */
  private async columnTypes(table: string): Promise<Map<string, string>> {
    const { rows } = await sql<{ name: string; type: string }>`
      select attname as name, format_type(atttypid, null) as type
      from pg_attribute
      where attrelid = ${table}::regclass and attnum > 0 and not attisdropped`.execute(this.trx);
    return new Map(rows.map((row) => [row.name, row.type]));
  }
}
