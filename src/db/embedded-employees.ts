import type { Db } from './database.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';

/** An employee as leaves and expenses embed it. */
export interface EmbeddedEmployee {
  id: number;
  employee_number: string;
  full_name: string;
  department: string;
}

/** The company's employees, with the columns leaves and expenses embed. */
const embeddedColumns = (db: Db, companyId: number) =>
  db
    .selectFrom('employees')
    .select(['id', 'employee_number', 'full_name', 'department'])
    .where('company_id', '=', companyId);

const embeddedEmployeesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    embeddedColumns(db, values.companyId).where(oneOfIds(db, 'id', values.ids)),
);

const embeddedEmployeesAfter = preparedQuery(
  (db, values: { companyId: number; after: number; limit: number }) =>
    embeddedColumns(db, values.companyId)
      .where('id', '>', values.after)
      .orderBy('id')
      .limit(values.limit),
);

/**
 * The company's employees among `ids`, by id. Reads of many records at once (the change feed's
 * 1,000) look their employees up by key here instead of joining: PostgreSQL, planning the join
 * for ~800 rows, hashed all the company's employees, twice for a leave and its substitute
 * (20,000 of them: 23 ms of a page's 31).
 */
export async function employeesById(
  db: Db,
  companyId: number,
  ids: Iterable<number | null>,
): Promise<Map<number, EmbeddedEmployee>> {
  const wanted = [...new Set(ids)].filter((id): id is number => id !== null);
  if (wanted.length === 0) return new Map();
  const rows = await embeddedEmployeesAmong(db, { companyId, ids: wanted });
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * At most this many employees are held by the directories of all companies together (~200 bytes
 * each: 20 MB); a company with more is looked up page by page.
 */
export const DIRECTORY_MAX_EMPLOYEES = 100_000;

/** How many employees one statement of a directory's read reads. */
const DIRECTORY_CHUNK = 1000;

type Directory = Map<number, EmbeddedEmployee>;

interface HeldDirectory {
  version: number;
  /** The employees by id; undefined while being read; null: more than the directories hold. */
  directory: Directory | null | undefined;
}

/**
 * Companies' employees as list pages embed them, read whole once per data version and kept, so a
 * page of leaves or expenses is read without joining the employees table: on PostgreSQL the
 * joins (an employee and a substitute a leave, an employee an expense) were two thirds of
 * reading a page's rows, and those reads a quarter of the database's time under the cold mix
 * (docs/performance.md, item 72). A company's copy is read in the background the first time a
 * page of a version asks for it; until it is there, pages look their employees up by key, so no
 * request waits for it (the bench company's 20,000 take 20–70 ms). Bounded by the employees held
 * (DIRECTORY_MAX_EMPLOYEES): the least recently used companies go first; a newer version
 * replaces the company's older one.
 */
export class EmployeeDirectories {
  private readonly held = new Map<number, HeldDirectory>();
  private employees = 0;
  private readonly maxEmployees: number;
  private closed = false;
  /** The reads under way, those of companies no longer held (a newer version, evicted) too. */
  private readonly reads = new Set<Promise<void>>();

  constructor(maxEmployees: number = DIRECTORY_MAX_EMPLOYEES) {
    this.maxEmployees = maxEmployees;
  }

  /**
   * The company's employees at `version`, by id, when they are held; else null, and they are
   * read for the next time (unless they are being read, the company has more than the
   * directories hold, or the request read an older version than the one held).
   */
  of(db: Db, companyId: number, version: number): Directory | null {
    const found = this.held.get(companyId);
    if (found && found.version === version) {
      // Refresh its place in the LRU order.
      this.held.delete(companyId);
      this.held.set(companyId, found);
      return found.directory ?? null;
    }
    if ((found && found.version > version) || this.closed) return null;
    if (found) this.forget(companyId, found);
    const entry: HeldDirectory = { version, directory: undefined };
    this.held.set(companyId, entry);
    const reading = this.read(db, companyId).then(
      (directory) => {
        if (this.held.get(companyId) !== entry) return;
        entry.directory = directory;
        this.employees += directory?.size ?? 0;
        this.evict(companyId);
      },
      // A failed read (database down) is not remembered: the next page reads it again.
      () => {
        if (this.held.get(companyId) === entry) this.held.delete(companyId);
      },
    );
    this.reads.add(reading);
    reading.finally(() => this.reads.delete(reading));
    return null;
  }

  /** How many employees the directories hold now. */
  heldEmployees(): number {
    return this.employees;
  }

  /** Resolves once the reads under way have ended (for callers that must see them, as tests). */
  async settled(): Promise<void> {
    await Promise.all(this.reads);
  }

  /**
   * Starts no more reads and ends those under way after their current statement. The service
   * closes them before its database: on Node 22, SQLite's reader threads stopped while a read
   * was under way never finished stopping, and the service's close waited for ever.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  /**
   * The company's employees, read DIRECTORY_CHUNK at a time in id order: the rows of one
   * statement are made into objects on the event loop (PostgreSQL's driver) or handed over to it
   * (SQLite's reader threads), and all 20,000 of the bench company at once held it for 50 ms.
   */
  private async read(db: Db, companyId: number): Promise<Directory | null> {
    const directory: Directory = new Map();
    for (let after = 0; ; ) {
      const rows = await embeddedEmployeesAfter(db, { companyId, after, limit: DIRECTORY_CHUNK });
      for (const row of rows) directory.set(row.id, row);
      if (directory.size > this.maxEmployees || this.closed) return null;
      const last = rows.at(-1);
      if (!last || rows.length < DIRECTORY_CHUNK) return directory;
      after = last.id;
    }
  }

  private forget(companyId: number, entry: HeldDirectory): void {
    this.held.delete(companyId);
    this.employees -= entry.directory?.size ?? 0;
  }

  /** Forgets the least recently used companies' directories, `kept`'s last, while too many. */
  private evict(kept: number): void {
    for (const [companyId, entry] of this.held) {
      if (this.employees <= this.maxEmployees) return;
      if (companyId !== kept) this.forget(companyId, entry);
    }
  }
}

/**
 * The company's employees among `ids`, by id, from its directory at `version` where it is held;
 * the rest (a company not held yet or too large to hold, employees added since that version) by
 * key.
 */
export async function embeddedEmployees(
  db: Db,
  directories: EmployeeDirectories,
  of: { companyId: number; version: number },
  ids: Iterable<number | null>,
): Promise<Map<number, EmbeddedEmployee>> {
  const directory = directories.of(db, of.companyId, of.version);
  if (!directory) return employeesById(db, of.companyId, ids);
  const found = new Map<number, EmbeddedEmployee>();
  const missing: number[] = [];
  for (const id of ids) {
    if (id === null || found.has(id)) continue;
    const employee = directory.get(id);
    if (employee) found.set(id, employee);
    else missing.push(id);
  }
  if (missing.length > 0) {
    for (const [id, employee] of await employeesById(db, of.companyId, missing)) {
      found.set(id, employee);
    }
  }
  return found;
}
