import type { NewReceipt } from '../db/database.ts';
import { RECORD_TYPES, type RecordType } from '../resources/index.ts';
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
function recordRows(entries: Iterable<{ line: number; row: object }>): RecordRows {
  let columns: string[] | null = null;
  const values: unknown[] = [];
  const lines: number[] = [];
  for (const { line, row } of entries) {
    columns ??= Object.keys(row);
    for (const column of columns) values.push((row as Record<string, unknown>)[column]);
    lines.push(line);
  }
  return { columns: columns ?? [], values, lines };
}

/** Each record's rows, and its children's with the company and the record's id in front. */
export function flatten(pending: PendingRecords): Batch {
  const batch: Batch = {};
  for (const descriptor of RECORD_TYPES) {
    const records = [...pending[descriptor.type].values()];
    batch[descriptor.table] = recordRows(records);
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
