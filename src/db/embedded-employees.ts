import type { Db } from './database.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';

/** An employee as leaves and expenses embed it. */
export interface EmbeddedEmployee {
  id: number;
  employee_number: string;
  full_name: string;
  department: string;
}

const embeddedEmployeesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    db
      .selectFrom('employees')
      .select(['id', 'employee_number', 'full_name', 'department'])
      .where('company_id', '=', values.companyId)
      .where(oneOfIds(db, 'id', values.ids)),
);

const embeddedEmployeesOf = preparedQuery((db, values: { companyId: number; limit: number }) =>
  db
    .selectFrom('employees')
    .select(['id', 'employee_number', 'full_name', 'department'])
    .where('company_id', '=', values.companyId)
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

type Directory = Map<number, EmbeddedEmployee>;

interface HeldDirectory {
  version: number;
  /** Null: the company has more employees than the directories hold. */
  directory: Promise<Directory | null>;
  /** The employees it holds, once read. */
  size: number;
}

/**
 * Companies' employees as list pages embed them, read whole once per data version and kept, so a
 * page of leaves or expenses is read without joining the employees table: on PostgreSQL the
 * joins (an employee and a substitute a leave, an employee an expense) were two thirds of
 * reading a page's rows, and those reads a quarter of the database's time under the cold mix
 * (docs/performance.md, item 72). Bounded by the employees held (DIRECTORY_MAX_EMPLOYEES): the
 * least recently used companies go first; a newer version replaces the company's older one.
 */
export class EmployeeDirectories {
  private readonly held = new Map<number, HeldDirectory>();
  private employees = 0;
  private readonly maxEmployees: number;

  constructor(maxEmployees: number = DIRECTORY_MAX_EMPLOYEES) {
    this.maxEmployees = maxEmployees;
  }

  /** The company's employees at `version`, by id, or null when it has too many to hold. */
  of(db: Db, companyId: number, version: number): Promise<Directory | null> {
    const found = this.held.get(companyId);
    if (found && found.version === version) {
      // Refresh its place in the LRU order.
      this.held.delete(companyId);
      this.held.set(companyId, found);
      return found.directory;
    }
    // A request that read an older version than the one held reads its employees by key.
    if (found && found.version > version) return Promise.resolve(null);
    if (found) this.forget(companyId, found);
    const entry: HeldDirectory = { version, directory: this.read(db, companyId), size: 0 };
    this.held.set(companyId, entry);
    entry.directory.then(
      (directory) => {
        if (this.held.get(companyId) !== entry) return;
        entry.size = directory?.size ?? 0;
        this.employees += entry.size;
        this.evict(companyId);
      },
      // A failed read (database down) is not remembered.
      () => {
        if (this.held.get(companyId) === entry) this.held.delete(companyId);
      },
    );
    return entry.directory;
  }

  /** How many employees the directories hold now. */
  heldEmployees(): number {
    return this.employees;
  }

  private async read(db: Db, companyId: number): Promise<Directory | null> {
    const rows = await embeddedEmployeesOf(db, { companyId, limit: this.maxEmployees + 1 });
    if (rows.length > this.maxEmployees) return null;
    return new Map(rows.map((row) => [row.id, row]));
  }

  private forget(companyId: number, entry: HeldDirectory): void {
    this.held.delete(companyId);
    this.employees -= entry.size;
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
 * The company's employees among `ids`, by id, from its directory at `version` where it has one;
 * the rest (a company too large to hold, or employees added since that version) by key.
 */
export async function embeddedEmployees(
  db: Db,
  directories: EmployeeDirectories,
  of: { companyId: number; version: number },
  ids: Iterable<number | null>,
): Promise<Map<number, EmbeddedEmployee>> {
  const directory = await directories.of(db, of.companyId, of.version);
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
