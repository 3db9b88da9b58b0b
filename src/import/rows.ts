import { hash } from 'node:crypto';
import type { NewReceipt } from '../db/database.ts';
import { COMPANY, RECORD_TYPES, type RecordType, type RecordTypeOf } from '../resources/index.ts';
import type { ParsedRecord } from './records.ts';

/**
 * One table's rows, flattened row after row: `values` holds `columns.length` values a row.
 * Flat arrays of plain values are what a batch is made of because they cross to the SQLite
 * writer thread at a third of the cost of row objects, and bind to statements as they are.
 */
export interface TableRows {
  columns: readonly string[];
  values: unknown[];
}

/** The rows of records from the file (not their children): each row's line goes with it. */
export interface RecordRows extends TableRows {
  lines: number[];
}

/** The rows of one batch of records, by table (see `IMPORTED_TABLES`). */
export type Batch = Record<string, TableRows>;

/** Delete lines of one record type, in file order: each one's line, company and id. */
export interface DeleteBatch {
  type: RecordType;
  lines: number[];
  companyIds: number[];
  ids: number[];
}

export const rowCount = (rows: TableRows): number =>
  rows.columns.length === 0 ? 0 : rows.values.length / rows.columns.length;

/** The values of one column, row by row. */
export function columnValues<T>(rows: TableRows, column: string): T[] {
  const width = rows.columns.length;
  const at = rows.columns.indexOf(column);
  if (at < 0) return [];
  const values: T[] = [];
  for (let i = at; i < rows.values.length; i += width) values.push(rows.values[i] as T);
  return values;
}

/** A record waiting to be written, with what it brings along. */
export interface PendingRecord {
  line: number;
  row: ParsedRecord['row'];
  children: ParsedRecord['children'];
  receipt: NewReceipt | null;
}

/** Records waiting to be written, by type and id (a later line with the same id wins). */
export type PendingRecords = Record<RecordType, Map<number, PendingRecord>>;

export const emptyPending = (): PendingRecords =>
  Object.fromEntries(RECORD_TYPES.map((d) => [d.type, new Map()])) as PendingRecords;

/**
 * A table's pending rows, flattened. Every row of a table has the same columns, in the same
 * order: the parsers build each table's rows with one object literal.
 */
function recordRows(
  entries: Iterable<{ line: number; row: object }>,
  extra: (entry: number) => unknown[] = () => [],
  extraColumns: readonly string[] = [],
): RecordRows {
  let columns: string[] | null = null;
  const values: unknown[] = [];
  const lines: number[] = [];
  let entry = 0;
  for (const { line, row } of entries) {
    columns ??= Object.keys(row);
    for (const column of columns) values.push((row as Record<string, unknown>)[column]);
    values.push(...extra(entry++));
    lines.push(line);
  }
  return { columns: columns ? [...columns, ...extraColumns] : [], values, lines };
}

/**
 * What each record of the batch brings along (a leave's attachments, an expense's items and
 * receipt), as one short text by record id: the record's row changes when they change, and so
 * the change feed sees a leave whose attachments, or an expense whose items or receipt, alone
 * changed. Records that bring nothing have none. Made from the flattened rows, where each
 * record's children follow one another, by the writer (on a SQLite import's second thread).
 */
export function childrenDigests(descriptor: RecordTypeOf, batch: Batch): Map<number, string> {
  const parts = new Map<number, unknown[][]>();
  const partsOf = (id: number) => {
    let entry = parts.get(id);
    if (!entry) {
      entry = [...descriptor.children.map(() => []), [null]];
      parts.set(id, entry);
    }
    return entry;
  };
  descriptor.children.forEach(({ table, parentColumn }, index) => {
    const { columns, values } = batch[table] as TableRows;
    const width = columns.length;
    const parentAt = columns.indexOf(parentColumn);
    for (let row = 0; row < values.length; row += width) {
      const part = partsOf(values[row + parentAt] as number)[index] as unknown[];
      for (let i = row; i < row + width; i++) part.push(values[i]);
    }
  });
  if (descriptor.receipt) {
    const receipts = batch.receipts as TableRows;
    const hashes = columnValues<string>(receipts, 'original_sha256');
    columnValues<number>(receipts, 'expense_id').forEach((id, i) => {
      const entry = partsOf(id);
      entry[entry.length - 1] = [hashes[i]];
    });
  }
  const digests = new Map<number, string>();
  for (const [id, entry] of parts) {
    digests.set(id, hash('sha1', JSON.stringify(entry), 'base64url'));
  }
  return digests;
}

/** Each record's rows, and its children's with the company and the record's id in front. */
export function flatten(pending: PendingRecords): Batch {
  const batch: Batch = {};
  for (const descriptor of RECORD_TYPES) {
    const records = [...pending[descriptor.type].values()];
    if (descriptor === COMPANY) {
      batch[descriptor.table] = recordRows(records);
    } else if (descriptor.children.length > 0 || descriptor.receipt) {
      // The writer sets each row's digest of its children (`childrenDigests`) and change_seq
      // (its company's import number).
      batch[descriptor.table] = recordRows(records, () => [null, 0], [
        'children_digest',
        'change_seq',
      ]);
    } else {
      batch[descriptor.table] = recordRows(records, () => [0], ['change_seq']);
    }
    for (const { table, parentColumn } of descriptor.children) {
      let columns: string[] | null = null;
      const values: unknown[] = [];
      for (const { row, children } of records) {
        for (const child of children[table] ?? []) {
          columns ??= Object.keys(child);
          values.push(row.company_id, row.id);
          for (const column of columns) values.push((child as Record<string, unknown>)[column]);
        }
      }
      batch[table] = { columns: ['company_id', parentColumn, ...(columns ?? [])], values };
    }
    if (descriptor.receipt) {
      const receipts: Array<{ line: number; row: NewReceipt }> = [];
      for (const { line, receipt } of records) if (receipt) receipts.push({ line, row: receipt });
      batch.receipts = recordRows(receipts);
    }
  }
  return batch;
}
