import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Mirror } from './mirror.ts';

const ROWS_A_WRITE = 1000;

/**
 * RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled. Null is an
 * empty field and the empty string a quoted one (`""`), as PostgreSQL's `COPY … CSV` writes and
 * reads them, so the two stay apart (a leave's `reason` null or ""). With `escapeFormulas`, text
 * a spreadsheet would run as a formula (it begins with `=`, `+`, `-`, `@`, a tab or a carriage
 * return) gets a leading `'`, which shows it as text (OWASP's advice); numbers stay as they are.
 */
export function csvField(value: string | number | null, escapeFormulas = false): string {
  if (value === null) return '';
  const text =
    escapeFormulas && typeof value === 'string' && FORMULA_START.test(value)
      ? `'${value}`
      : String(value);
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const FORMULA_START = /^[=+\-@\t\r]/;

export interface CsvOptions {
  /** Text that would run as a formula in a spreadsheet is written with a leading `'`. */
  escapeFormulas?: boolean | undefined;
}

/** Writes `DIR/<table>.csv` for every resource table of the mirror, replacing each file whole. */
export function writeCsv(mirror: Mirror, dir: string, { escapeFormulas }: CsvOptions = {}): void {
  const field = (value: string | number | null) => csvField(value, escapeFormulas);
  for (const table of mirror.tables()) {
    const columns = mirror.columnsOf(table);
    const path = join(dir, `${table}.csv`);
    const partial = `${path}.partial`;
    const fd = openSync(partial, 'w');
    try {
      let chunk = `${columns.map((column) => field(column)).join(',')}\r\n`;
      let rows = 0;
      for (const row of mirror.rows(table)) {
        chunk += `${columns.map((column) => field(row[column] ?? null)).join(',')}\r\n`;
        if (++rows % ROWS_A_WRITE === 0) {
          writeSync(fd, chunk);
          chunk = '';
        }
      }
      writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, path);
  }
}
