import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Change, Resource } from '../types.ts';
import { COLUMNS } from './columns.ts';

/** The table of each resource in the mirror file. */
export const TABLES: Record<Resource, string> = {
  employee: 'employees',
  leave_type: 'leave_types',
  leave: 'leaves',
  expense_category: 'expense_categories',
  expense: 'expenses',
};

const STATE_TABLE = '_cdapi_state';
const RECEIPTS_TABLE = '_cdapi_receipts';

/** What a run remembers besides the rows: where they come from and how far it read. */
export type StateName = 'cursor' | 'base_url' | 'company_id' | 'resources';

export type Cell = string | number | null;

/**
 * How a cell is bound: a whole number as a BigInt, which node:sqlite stores as INTEGER (a JS
 * number it always stores as REAL, so `true` would read back as 1.0 and an id as 10.0).
 */
const bound = (cell: Cell): Cell | bigint =>
  typeof cell === 'number' && Number.isSafeInteger(cell) ? BigInt(cell) : cell;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A column value: nested objects and arrays as JSON text, booleans as 0/1. */
export function cellOf(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * The SQLite file `cdapi-pull` writes: one table per resource whose columns are the record's
 * fields (added as new fields appear), plus the run's state. A page of the change feed and the
 * cursor after it are committed in one transaction, so an interrupted run resumes exactly.
 */
export class Mirror {
  private readonly db: DatabaseSync;
  private readonly columns = new Map<string, Set<string>>();
  private readonly statements = new Map<string, StatementSync>();
  /**
   * Whether the run deleted an employee (or every row): SQLite overwrites a deleted row
   * (secure_delete), but copies of rows it made while moving them between pages may stay in the
   * pages' unused space. Rewriting the file leaves none (`scrub`).
   */
  erased = false;

  constructor(path: string) {
    let db: DatabaseSync | undefined;
    let tables: string[];
    try {
      db = new DatabaseSync(path);
      // Checked before anything is written to it: a file of other tables is not ours to change.
      // The first read is also where SQLite finds a file that is not a database at all.
      tables = db
        .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
        .all()
        .map((row) => String(row.name));
    } catch (error) {
      db?.close();
      throw new Error(`cannot open the output file ${path}: ${openFailure(path, error as Error)}`);
    }
    this.db = db;
    if (tables.length > 0 && !tables.includes(STATE_TABLE)) {
      this.db.close();
      throw new Error(
        `the output file ${path} holds other tables (${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}), not a cdapi-pull mirror: use another file`,
      );
    }
    // secure_delete: a record the feed deleted (an employee's right to erasure) is overwritten
    // in the file, not only unlinked from its table.
    this.db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;',
    );
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL);
       CREATE TABLE IF NOT EXISTS ${RECEIPTS_TABLE} (expense_id INTEGER PRIMARY KEY, updated_at TEXT);`,
    );
    // The resources' tables are made by `hold`, once the run knows which it reads.
    for (const table of Object.values(TABLES)) if (tables.includes(table)) this.loadColumns(table);
  }

  /**
   * Makes the tables of the resources the run reads, with every field of their records as a
   * column (`COLUMNS`), and adds those a file made by an earlier version lacks. Only those
   * resources: an empty table of a resource the run does not read would say "the company has
   * none", a thing the file cannot know.
   */
  hold(resources: readonly Resource[]): void {
    for (const resource of resources) {
      const table = TABLES[resource];
      if (!this.columns.has(table)) {
        this.db.exec(`CREATE TABLE IF NOT EXISTS ${quote(table)} (id INTEGER PRIMARY KEY)`);
        this.loadColumns(table);
      }
      this.addColumns(table, COLUMNS[resource]);
    }
  }

  /** The resources' tables the file holds, in the feed's order. */
  tables(): string[] {
    return Object.values(TABLES).filter((table) => this.columns.has(table));
  }

  private loadColumns(table: string): void {
    const info = this.db.prepare(`PRAGMA table_info(${quote(table)})`).all();
    this.columns.set(table, new Set(info.map((row) => String(row.name))));
  }

  state(name: StateName): string | null {
    const row = this.statement(`SELECT value FROM ${STATE_TABLE} WHERE name = ?`).get(name);
    return row ? String(row.value) : null;
  }

  setState(name: StateName, value: string): void {
    this.statement(
      `INSERT INTO ${STATE_TABLE} (name, value) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    ).run(name, value);
  }

  /** Applies one page of changes and stores `cursor`, all in one transaction. */
  apply(entries: Change[], cursor: string | null): { upserts: number; deletes: number } {
    let upserts = 0;
    let deletes = 0;
    this.transaction(() => {
      for (const entry of entries) {
        const table = TABLES[entry.resource];
        // The feed sends the resources asked for, whose tables `hold` made.
        if (!table || !this.columns.has(table)) continue;
        if (entry.change === 'delete' || entry.record === null) {
          // Counted when the file held the row: the feed also lists deletions of records a
          // mirror never had (made and deleted between two runs, inactive reference records).
          const { changes } = this.statement(`DELETE FROM ${quote(table)} WHERE id = ?`).run(
            entry.id,
          );
          deletes += Number(changes);
          if (entry.resource === 'employee' && Number(changes) > 0) this.erased = true;
        } else {
          const record = entry.record as Record<string, unknown>;
          if (entry.resource === 'expense') this.noteExpenseAgain(record);
          this.upsert(table, record);
          upserts += 1;
        }
      }
      if (cursor !== null) this.setState('cursor', cursor);
    });
    return { upserts, deletes };
  }

  /** Forgets every row and the cursor, for a pull that must start again from the beginning. */
  reset(): void {
    // The rows may hold employees deleted since, whose deletion the feed no longer lists.
    this.erased = true;
    this.transaction(() => {
      for (const table of this.tables()) this.db.exec(`DELETE FROM ${quote(table)}`);
      this.statement(`DELETE FROM ${STATE_TABLE} WHERE name = 'cursor'`).run();
    });
  }

  /** The columns of a table in their order, `id` first. */
  columnsOf(table: string): string[] {
    return [...(this.columns.get(table) ?? [])];
  }

  /** Every row of a table, by id. */
  rows(table: string): Iterable<Record<string, Cell>> {
    return this.db.prepare(`SELECT * FROM ${quote(table)} ORDER BY id`).iterate() as Iterable<
      Record<string, Cell>
    >;
  }

  /** Expenses with a receipt, and when each last changed. */
  expensesWithReceipts(): Array<{ id: number; updated_at: string }> {
    if (!this.columns.get(TABLES.expense)?.has('receipt')) return [];
    return this.db
      .prepare(`SELECT id, updated_at FROM expenses WHERE receipt IS NOT NULL ORDER BY id`)
      .all() as Array<{ id: number; updated_at: string }>;
  }

  /** The receipts on disk and the version of their expense. */
  downloadedReceipts(): Map<number, string | null> {
    const rows = this.db.prepare(`SELECT expense_id, updated_at FROM ${RECEIPTS_TABLE}`).all();
    return new Map(rows.map((row) => [Number(row.expense_id), row.updated_at as string | null]));
  }

  markReceipt(expenseId: number, updatedAt: string | null): void {
    if (updatedAt === null) {
      this.statement(`DELETE FROM ${RECEIPTS_TABLE} WHERE expense_id = ?`).run(expenseId);
      return;
    }
    this.statement(
      `INSERT INTO ${RECEIPTS_TABLE} (expense_id, updated_at) VALUES (?, ?)
       ON CONFLICT (expense_id) DO UPDATE SET updated_at = excluded.updated_at`,
    ).run(expenseId, updatedAt);
  }

  /**
   * An expense the feed brings again: its receipt image may have changed though nothing the
   * record shows did (the `updated_at` is the source's own, and a change of its embedded
   * employee or category may come with one), so its downloaded receipt is marked as not
   * matching (null) and fetched again.
   */
  private noteExpenseAgain(record: Record<string, unknown>): void {
    this.statement(`UPDATE ${RECEIPTS_TABLE} SET updated_at = NULL WHERE expense_id = ?`).run(
      record.id as number,
    );
  }

  /**
   * Closes the file with every page written back to it and the write-ahead log emptied: what
   * the run deleted is overwritten there too, not only in the log (secure_delete).
   */
  /** Rewrites the file from its rows alone (VACUUM): nothing deleted stays anywhere in it. */
  scrub(): void {
    this.db.exec('VACUUM');
    this.erased = false;
  }

  close(): void {
    try {
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } finally {
      this.db.close();
    }
  }

  /** Adds the columns of `names` the table does not have yet, in their order. */
  private addColumns(table: string, names: readonly string[]): void {
    const known = this.columns.get(table) as Set<string>;
    for (const name of names) {
      if (known.has(name)) continue;
      this.db.exec(`ALTER TABLE ${quote(table)} ADD COLUMN ${quote(name)}`);
      known.add(name);
      this.statements.clear();
    }
  }

  private upsert(table: string, record: Record<string, unknown>): void {
    const names = Object.keys(record);
    this.addColumns(table, names);
    const sql = `INSERT OR REPLACE INTO ${quote(table)} (${names.map(quote).join(', ')})
      VALUES (${names.map(() => '?').join(', ')})`;
    this.statement(sql).run(...names.map((name) => bound(cellOf(record[name]))));
  }

  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private transaction(work: () => void): void {
    this.db.exec('BEGIN');
    try {
      work();
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }
}

/** Why SQLite could not open `path`, in words where its own are `unable to open database file`. */
function openFailure(path: string, error: Error): string {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) return 'it is a folder';
  if (!existsSync(dirname(path))) return `its folder ${dirname(path)} does not exist`;
  return error.message;
}
