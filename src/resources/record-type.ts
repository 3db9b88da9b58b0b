import type { Database } from '../db/database.ts';
import type { SampledList } from '../db/sampled-lists.ts';
import type { FieldReader } from './fields.ts';

/**
 * What the service knows about one record type, in one place: the importer parses, checks,
 * orders and writes records from it, the planner statistics and the deferred indexes take
 * their tables from it, the demo numbers its records by it. `index.ts` lists every type.
 */
export interface RecordTypeDescriptor {
  /** The record's `type` in an import file, and its name in messages (`employee 7 …`). */
  readonly type: string;
  /** The table its rows go to; unique on `(company_id, id)` but for companies. */
  readonly table: keyof Database;
  /** How people count it: the CLI's summary (`1 leave type`, `2 leave types`). */
  readonly noun: readonly [singular: string, plural: string];
  /**
   * The records it names: each field holds the id of a record of that type, which must belong
   * to the same company and come earlier in the file or be stored already.
   */
  readonly parents: readonly Reference[];
  /**
   * The columns that records naming it embed (a leave's `employee`, an expense's `category`):
   * a change to one of them changes those records too, in the change feed; a change to any
   * other column (an employee's salary, a leave type's quota) changes only this record.
   */
  readonly embedded: readonly string[];
  /**
   * Columns it stores that no answer contains (an employee's national id, salary, IBAN and
   * address). A change to them alone is stored but changes nothing a client can see, so it
   * moves neither the record's place in the change feed nor its `updated_at`: neither may tell
   * a client that a salary changed.
   */
  readonly unserved: readonly string[];
  /** Rows it brings along: written with it, and replaced with it when it is imported again. */
  readonly children: readonly Child[];
  /** Whether it may name a receipt image (stored by the importer, a `receipts` row). */
  readonly receipt: boolean;
  /** Its paginated API list, when it has one: sort fields, and its samples (sampled-lists.ts). */
  readonly list: ListFacts | null;
  /** Reads one record, or throws a FieldError naming the first bad field. */
  parse(r: FieldReader): ParsedRow;
}

export interface Reference {
  /** The field that holds the id; an optional one may be null. */
  readonly field: string;
  /** The record type it names. */
  readonly type: string;
}

export interface Child {
  readonly table: 'leave_attachments' | 'expense_items';
  /** The column that names the record; rows also carry its company_id. */
  readonly parentColumn: string;
}

export interface ListFacts {
  /** The `sort` values the list takes (src/schemas), `id` first. */
  readonly sortFields: readonly string[];
  /** Long lists keep samples for deep pages; null when they need none. */
  readonly sampled: SampledList | null;
}

/** One record's row, and what it brings along. */
export interface ParsedRow {
  /** Its table's row, every row of a table with the same columns in the same order. */
  row: { id: number; company_id?: number } & Record<string, unknown>;
  /** Each child table's rows, without company_id and the parent's id (the importer adds them). */
  children?: Partial<Record<Child['table'], object[]>>;
  /** The receipt image the record names, relative to the import file. */
  receiptPath?: string | null;
}

/** Keeps a descriptor's literal types (its `type`, its parents' types) for `index.ts`. */
export const recordType = <const D extends RecordTypeDescriptor>(descriptor: D): D => descriptor;
