import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { DatabaseHandle } from '../db/connect.ts';
import type {
  Db,
  NewCompany,
  NewEmployee,
  NewExpense,
  NewExpenseCategory,
  NewLeave,
  NewLeaveType,
  NewReceipt,
} from '../db/database.ts';
import { refreshPlannerStatistics } from '../db/statistics.ts';
import { sniffImageType } from '../receipts/image-type.ts';
import { processReceipt, UnreadableImageError } from '../receipts/process.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { FieldError } from './fields.ts';
import { ImportError } from './import-error.ts';
import { readNdjson, type SourceRecord } from './ndjson.ts';
import { type ItemInput, type ParsedRecord, parseRecord, RECORD_TYPES } from './records.ts';
import { beginImport, beginImportOnThread, type ImportTransaction } from './transaction.ts';
import type { Batch, RecordRows, TableRows } from './writer.ts';

export type RecordType = (typeof RECORD_TYPES)[number];

export interface ImportSummary {
  records: number;
  counts: Record<RecordType, number>;
  receipts: number;
}

/** Parents that children reference; the map values are the owning company ids. */
type ParentKind = 'employee' | 'leave_type' | 'expense_category';
const PARENT_TABLES = {
  employee: 'employees',
  leave_type: 'leave_types',
  expense_category: 'expense_categories',
} as const;

const BATCH_SIZE = 500;
/**
 * Children (items, attachments) that end a batch early: a record may bring 500 items, and a
 * batch of such records would hold a quarter of a million rows (over 100 MB) at once.
 */
const BATCH_CHILDREN = 5000;
const RECEIPT_MAX_BYTES = 25 * 1024 * 1024;

export interface ImportOptions {
  /**
   * Writes the rows on a second thread (SQLite files only; see `beginImportOnThread`). By
   * default `importFile` does for files of WRITER_THREAD_MIN_BYTES and more.
   */
  writerThread?: boolean;
  /** `importFile`: called as the file is read, once a chunk (64 KiB) of it is checked. */
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportProgress {
  bytesRead: number;
  totalBytes: number;
  /** Records read so far (blank lines are not records). */
  records: number;
}

/** From this size on, a SQLite import writes on a thread of its own. */
export const WRITER_THREAD_MIN_BYTES = 16 * 1024 * 1024;

export async function importFile(
  handle: DatabaseHandle,
  store: ReceiptStore,
  file: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new Error(`cannot read ${file}: no such file`);
  const writerThread = options.writerThread ?? info.size >= WRITER_THREAD_MIN_BYTES;
  const { onProgress } = options;
  const source = readNdjson(
    file,
    onProgress && ((read) => onProgress({ ...read, totalBytes: info.size })),
  );
  return importRecords(handle, store, source, dirname(resolve(file)), { writerThread });
}

/**
 * Imports records in one transaction: all of them, or (on the first bad record) none, with
 * the receipt files this import added removed again. `source` yields records in batches (any
 * size); `baseDir` is where receipt paths start.
 */
export async function importRecords(
  handle: DatabaseHandle,
  store: ReceiptStore,
  source: AsyncIterable<readonly SourceRecord[]>,
  baseDir: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const session = new ImportSession(store, baseDir);
  const onThread = options.writerThread && handle.dialect === 'sqlite' && !handle.sqlite.memory;
  const transaction = onThread ? await beginImportOnThread(handle) : await beginImport(handle);
  try {
    // One batch is written while the next is read (by PostgreSQL in its own process, by the
    // writer thread, or by SQLite here while a receipt is processed); batches are written in
    // file order, each after the one before.
    let writing: Promise<void> = Promise.resolve();
    try {
      for await (const records of source) {
        for (const { line, value } of records) {
          // Most records need no database look-up and no file: no promise to wait for.
          const adding = session.add(transaction.reader, line, value);
          if (adding) await adding;
          if (session.pendingCount >= BATCH_SIZE || session.pendingChildren >= BATCH_CHILDREN) {
            await writing;
            writing = session.flush(transaction);
            // Its failure is thrown where it is awaited; until then it is not unhandled.
            writing.catch(() => {});
          }
        }
      }
    } catch (error) {
      // The batch being written holds earlier lines: its error, if any, is the first one.
      await writing;
      throw error;
    }
    await writing;
    await session.flush(transaction);
    await transaction.commit(session.companyIds());
  } catch (error) {
    // A rollback that fails too (a lost PostgreSQL connection) has ended the transaction as
    // well; the first error is the one to report.
    await transaction.rollback().catch(() => {});
    await session.removeAddedFiles(handle.db);
    throw error;
  }
  await refreshPlannerStatistics(handle);
  await session.removeReplacedFiles(handle.db);
  return session.summary();
}

/** A record another one names: its company, or a parent record. */
type Reference = { kind: 'company'; id: number } | { kind: ParentKind; id: number };

class ImportSession {
  private readonly companies = new Set<number>();
  private readonly owners: Record<ParentKind, Map<number, number>> = {
    employee: new Map(),
    leave_type: new Map(),
    expense_category: new Map(),
  };
  private pending: PendingRows = emptyPending();
  /** Records added since the last flush, and the items and attachments they bring. */
  pendingCount = 0;
  pendingChildren = 0;
  private readonly addedFiles = new Set<string>();
  private readonly replacedFiles = new Set<string>();
  private readonly counts = Object.fromEntries(RECORD_TYPES.map((t) => [t, 0])) as Record<
    RecordType,
    number
  >;
  private records = 0;
  private receipts = 0;

  /** The import folder with every link in its path followed, once it is needed. */
  private realBaseDir: Promise<string> | undefined;

  constructor(
    private readonly store: ReceiptStore,
    private readonly baseDir: string,
  ) {}

  /**
   * Checks one record and queues its rows. Returns a promise only when it has to look up a
   * record it names in the database, or store a receipt.
   */
  add(reader: Db, line: number, value: unknown): Promise<void> | undefined {
    let record: ParsedRecord;
    try {
      record = parseRecord(value);
    } catch (error) {
      if (error instanceof FieldError) throw new ImportError(line, error.field, error.problem);
      throw error;
    }
    const unknown = this.unknownReferences(record);
    if (unknown.length > 0) {
      return this.lookUp(reader, unknown).then(() => this.accept(line, record));
    }
    return this.accept(line, record);
  }

  /** The records `record` names that neither the file so far nor a look-up has shown yet. */
  private unknownReferences(record: ParsedRecord): Reference[] {
    if (record.type === 'company') return [];
    const references: Reference[] = [];
    const companyId = record.row.company_id;
    if (!this.companies.has(companyId)) references.push({ kind: 'company', id: companyId });
    const parent = (kind: ParentKind, id: number | null) => {
      if (id !== null && !this.owners[kind].has(id)) references.push({ kind, id });
    };
    if (record.type === 'leave') {
      parent('employee', record.row.employee_id);
      parent('leave_type', record.row.leave_type_id);
      parent('employee', record.row.substitute_employee_id ?? null);
    } else if (record.type === 'expense') {
      parent('employee', record.row.employee_id);
      parent('expense_category', record.row.category_id);
    }
    return references;
  }

  /** Learns from the database which company owns each stored record of `references`. */
  private async lookUp(reader: Db, references: Reference[]): Promise<void> {
    for (const reference of references) {
      if (reference.kind === 'company') {
        const found = await reader
          .selectFrom('companies')
          .select('id')
          .where('id', '=', reference.id)
          .executeTakeFirst();
        if (found) this.companies.add(reference.id);
        continue;
      }
      const stored = await reader
        .selectFrom(PARENT_TABLES[reference.kind])
        .select('company_id')
        .where('id', '=', reference.id)
        .executeTakeFirst();
      if (stored) this.owners[reference.kind].set(reference.id, stored.company_id);
    }
  }

  /** Checks the references of a record (all known by now) and queues its rows. */
  private accept(line: number, record: ParsedRecord): Promise<void> | undefined {
    if (record.type === 'company') {
      this.companies.add(record.row.id);
      this.pending.companies.set(record.row.id, { line, row: record.row });
      return this.counted(record);
    }
    const companyId = record.row.company_id;
    this.requireCompany(line, companyId);
    switch (record.type) {
      case 'employee':
        this.claim(line, 'employee', record.row.id, companyId);
        this.pending.employees.set(record.row.id, { line, row: record.row });
        return this.counted(record);
      case 'leave_type':
        this.claim(line, 'leave_type', record.row.id, companyId);
        this.pending.leave_types.set(record.row.id, { line, row: record.row });
        return this.counted(record);
      case 'expense_category':
        this.claim(line, 'expense_category', record.row.id, companyId);
        this.pending.expense_categories.set(record.row.id, { line, row: record.row });
        return this.counted(record);
      case 'leave': {
        const { row } = record;
        this.requireParent(line, 'employee_id', 'employee', row.employee_id, companyId);
        this.requireParent(line, 'leave_type_id', 'leave_type', row.leave_type_id, companyId);
        if (row.substitute_employee_id != null) {
          this.requireParent(
            line,
            'substitute_employee_id',
            'employee',
            row.substitute_employee_id,
            companyId,
          );
        }
        const earlier = this.pending.leaves.get(row.id)?.row.company_id;
        this.checkSameBatchOwner(line, earlier, companyId, 'leave', row.id);
        this.pending.leaves.set(row.id, { line, row, attachments: record.attachments });
        return this.counted(record);
      }
      case 'expense': {
        const { row } = record;
        this.requireParent(line, 'employee_id', 'employee', row.employee_id, companyId);
        this.requireParent(line, 'category_id', 'expense_category', row.category_id, companyId);
        const earlier = this.pending.expenses.get(row.id)?.row.company_id;
        this.checkSameBatchOwner(line, earlier, companyId, 'expense', row.id);
        const queue = (receipt: NewReceipt | null) => {
          this.pending.expenses.set(row.id, { line, row, items: record.items, receipt });
          return this.counted(record);
        };
        if (!record.receiptPath) return queue(null);
        return this.storeReceipt(line, row.id, companyId, record.receiptPath).then(queue);
      }
    }
  }

  private counted(record: ParsedRecord): undefined {
    this.counts[record.type] += 1;
    this.records += 1;
    this.pendingCount += 1;
    if (record.type === 'leave') this.pendingChildren += record.attachments.length;
    else if (record.type === 'expense') this.pendingChildren += record.items.length;
    return undefined;
  }

  async flush(transaction: ImportTransaction): Promise<void> {
    const batch = flatten(this.pending);
    this.pending = emptyPending();
    this.pendingCount = 0;
    this.pendingChildren = 0;
    const outcome = await transaction.write(batch);
    if (outcome.conflict) {
      const { line, label, id, ownerCompanyId } = outcome.conflict;
      throw new ImportError(
        line,
        'company_id',
        `${label} ${id} already belongs to company ${ownerCompanyId}`,
      );
    }
    for (const key of outcome.replacedReceiptKeys) this.replacedFiles.add(key);
  }

  /** Every company the import touched: each gets a new data version with the commit. */
  companyIds(): number[] {
    return [...this.companies];
  }

  private requireCompany(line: number, companyId: number): void {
    if (this.companies.has(companyId)) return;
    throw new ImportError(
      line,
      'company_id',
      `company ${companyId} not found (companies must come first)`,
    );
  }

  /** A parent record in the file: the same id may not be claimed by two companies. */
  private claim(line: number, kind: ParentKind, id: number, companyId: number): void {
    const owner = this.owners[kind].get(id);
    if (owner !== undefined && owner !== companyId) {
      throw new ImportError(
        line,
        'company_id',
        `${kind} ${id} already belongs to company ${owner}`,
      );
    }
    this.owners[kind].set(id, companyId);
  }

  private checkSameBatchOwner(
    line: number,
    owner: number | undefined,
    companyId: number,
    label: string,
    id: number,
  ): void {
    if (owner !== undefined && owner !== companyId) {
      throw new ImportError(
        line,
        'company_id',
        `${label} ${id} already belongs to company ${owner}`,
      );
    }
  }

  /** A child's reference must name a record of its own company, earlier in the file or stored. */
  private requireParent(
    line: number,
    field: string,
    kind: ParentKind,
    id: number,
    companyId: number,
  ): void {
    const owner = this.owners[kind].get(id);
    if (owner === undefined) {
      throw new ImportError(
        line,
        field,
        `${kind} ${id} not found (parents must come before children)`,
      );
    }
    if (owner !== companyId) {
      throw new ImportError(line, field, `${kind} ${id} belongs to another company`);
    }
  }

  /** Stores a receipt's original byte for byte and its processed variant, made now. */
  private async storeReceipt(
    line: number,
    expenseId: number,
    companyId: number,
    path: string,
  ): Promise<NewReceipt> {
    const field = 'receipt.original';
    const absolute = resolve(this.baseDir, path);
    if (isAbsolute(path) || !isInside(this.baseDir, absolute)) {
      throw new ImportError(line, field, 'must be a path inside the import file’s folder');
    }
    // Links followed: a link in the folder (to the file or to a folder on its way) that leads
    // out of it is refused like `..`, so nothing outside the folder can be copied and served.
    const real = await realpath(absolute).catch(() => null);
    if (real === null) throw new ImportError(line, field, `file ${path} not found`);
    this.realBaseDir ??= realpath(this.baseDir);
    if (!isInside(await this.realBaseDir, real)) {
      throw new ImportError(
        line,
        field,
        `${path} leads to a file outside the import file’s folder`,
      );
    }
    const bytes = await readReceipt(real, line, field, path);
    const type = sniffImageType(bytes);
    if (!type)
      throw new ImportError(line, field, `${path} is not a JPEG, PNG, WebP, HEIC or TIFF image`);
    let processed: Buffer;
    try {
      processed = await processReceipt(bytes);
    } catch (error) {
      if (error instanceof UnreadableImageError) {
        throw new ImportError(line, field, `${path} cannot be read as an image (${error.message})`);
      }
      throw error;
    }
    // Content-addressed per company: re-importing the same file stores nothing new, and the
    // processed variant is derived from the original alone.
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const originalKey = `${companyId}/originals/${sha256}.${type.extension}`;
    const processedKey = `${companyId}/processed/${sha256}.jpg`;
    await this.putOnce(originalKey, bytes);
    await this.putOnce(processedKey, processed);
    this.receipts += 1;
    return {
      expense_id: expenseId,
      company_id: companyId,
      original_key: originalKey,
      original_content_type: type.contentType,
      original_size: bytes.length,
      original_sha256: sha256,
      processed_key: processedKey,
      processed_size: processed.length,
    };
  }

  private async putOnce(key: string, bytes: Uint8Array): Promise<void> {
    if (await this.store.exists(key)) return;
    await this.store.put(key, bytes);
    this.addedFiles.add(key);
  }

  /** After a failed import: files this import added that no committed row uses. */
  async removeAddedFiles(db: Db): Promise<void> {
    await this.removeUnreferenced(db, this.addedFiles);
  }

  /** After a successful import: files of receipts that were replaced and are now unused. */
  async removeReplacedFiles(db: Db): Promise<void> {
    await this.removeUnreferenced(db, this.replacedFiles);
  }

  private async removeUnreferenced(db: Db, keys: Set<string>): Promise<void> {
    for (const key of keys) {
      const used = await db
        .selectFrom('receipts')
        .select('expense_id')
        .where((eb) => eb.or([eb('original_key', '=', key), eb('processed_key', '=', key)]))
        .executeTakeFirst();
      if (!used) await this.store.delete(key);
    }
  }

  summary(): ImportSummary {
    return { records: this.records, counts: { ...this.counts }, receipts: this.receipts };
  }
}

/** Whether `path` lies inside the folder `dir` (both absolute, resolved the same way). */
function isInside(dir: string, path: string): boolean {
  const inside = relative(dir, path);
  return inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside);
}

/** Opened read-only, never through a link, and without waiting on a FIFO's writer. */
const RECEIPT_OPEN_FLAGS =
  fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/**
 * A receipt's bytes, read through one open file at a path without links, which may not have
 * become one since: the file checked is the file read.
 */
async function readReceipt(real: string, line: number, field: string, path: string) {
  const file = await open(real, RECEIPT_OPEN_FLAGS).catch(() => null);
  if (file === null) throw new ImportError(line, field, `file ${path} not found`);
  try {
    const info = await file.stat();
    if (!info.isFile()) throw new ImportError(line, field, `file ${path} not found`);
    if (info.size > RECEIPT_MAX_BYTES) {
      throw new ImportError(line, field, 'file is larger than 25 MB');
    }
    return await file.readFile();
  } finally {
    await file.close();
  }
}

/** Rows waiting to be written, keyed by id (a later line with the same id wins). */
interface PendingRows {
  companies: Map<number, { line: number; row: NewCompany }>;
  employees: Map<number, { line: number; row: NewEmployee }>;
  leave_types: Map<number, { line: number; row: NewLeaveType }>;
  expense_categories: Map<number, { line: number; row: NewExpenseCategory }>;
  leaves: Map<number, { line: number; row: NewLeave; attachments: string[] }>;
  expenses: Map<
    number,
    { line: number; row: NewExpense; items: ItemInput[]; receipt: NewReceipt | null }
  >;
}

function emptyPending(): PendingRows {
  return {
    companies: new Map(),
    employees: new Map(),
    leave_types: new Map(),
    expense_categories: new Map(),
    leaves: new Map(),
    expenses: new Map(),
  };
}

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

function flatten(pending: PendingRows): Batch {
  const attachments: TableRows = {
    columns: ['company_id', 'leave_id', 'file_name'],
    values: [],
  };
  for (const { row, attachments: names } of pending.leaves.values()) {
    for (const name of names) attachments.values.push(row.company_id, row.id, name);
  }
  const items: TableRows = {
    columns: ['company_id', 'expense_id', 'position', 'name', 'quantity', 'price_e4'],
    values: [],
  };
  const receipts: Array<{ line: number; row: NewReceipt }> = [];
  for (const { line, row, items: expenseItems, receipt } of pending.expenses.values()) {
    for (const { position, name, quantity, price_e4 } of expenseItems) {
      items.values.push(row.company_id, row.id, position, name, quantity, price_e4);
    }
    if (receipt) receipts.push({ line, row: receipt });
  }
  return {
    companies: recordRows(pending.companies.values()),
    employees: recordRows(pending.employees.values()),
    leave_types: recordRows(pending.leave_types.values()),
    expense_categories: recordRows(pending.expense_categories.values()),
    leaves: recordRows(pending.leaves.values()),
    leave_attachments: attachments,
    expenses: recordRows(pending.expenses.values()),
    expense_items: items,
    receipts: recordRows(receipts),
  };
}
