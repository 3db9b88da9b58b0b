import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Db, NewReceipt } from '../db/database.ts';
import { refreshPlannerStatistics } from '../db/statistics.ts';
import { sniffImageType } from '../receipts/image-type.ts';
import { processReceipt, UnreadableImageError } from '../receipts/process.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { FieldError } from './fields.ts';
import { type ParsedRecord, parseRecord, RECORD_TYPES } from './records.ts';
import { type PendingRows, writeBatches } from './writer.ts';

/** A record that cannot be imported; the whole import is rolled back. */
export class ImportError extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`line ${line}: ${field}: ${problem}`);
    this.name = 'ImportError';
  }
}

export type RecordType = (typeof RECORD_TYPES)[number];

export interface ImportSummary {
  records: number;
  counts: Record<RecordType, number>;
  receipts: number;
}

export interface SourceRecord {
  line: number;
  value: unknown;
}

/** Parents that children reference; the map values are the owning company ids. */
type ParentKind = 'employee' | 'leave_type' | 'expense_category';
const PARENT_TABLES = {
  employee: 'employees',
  leave_type: 'leave_types',
  expense_category: 'expense_categories',
} as const;

const BATCH_SIZE = 500;
const RECEIPT_MAX_BYTES = 25 * 1024 * 1024;

/** Reads an NDJSON file line by line; memory stays flat whatever the file's size. */
export async function* readNdjson(file: string): AsyncGenerator<SourceRecord> {
  const lines = createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let line = 0;
  for await (const raw of lines) {
    line += 1;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ImportError(line, '(line)', `is not valid JSON (${(error as Error).message})`);
    }
    yield { line, value };
  }
}

export async function importFile(
  handle: DatabaseHandle,
  store: ReceiptStore,
  file: string,
): Promise<ImportSummary> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new Error(`cannot read ${file}: no such file`);
  return importRecords(handle, store, readNdjson(file), dirname(resolve(file)));
}

/**
 * Imports records in one transaction: all of them, or (on the first bad record) none, with
 * the receipt files this import added removed again. `baseDir` is where receipt paths start.
 */
export async function importRecords(
  handle: DatabaseHandle,
  store: ReceiptStore,
  source: AsyncIterable<SourceRecord>,
  baseDir: string,
): Promise<ImportSummary> {
  const session = new ImportSession(store, baseDir);
  try {
    await handle.db.transaction().execute(async (trx) => {
      for await (const { line, value } of source) {
        await session.add(trx, line, value);
        if (session.pendingCount() >= BATCH_SIZE) await session.flush(trx);
      }
      await session.flush(trx);
      await session.bumpDataVersions(trx);
    });
  } catch (error) {
    await session.removeAddedFiles(handle.db);
    throw error;
  }
  await refreshPlannerStatistics(handle);
  await session.removeReplacedFiles(handle.db);
  return session.summary();
}

class ImportSession {
  private readonly companies = new Set<number>();
  private readonly owners: Record<ParentKind, Map<number, number>> = {
    employee: new Map(),
    leave_type: new Map(),
    expense_category: new Map(),
  };
  private pending: PendingRows = emptyPending();
  private readonly addedFiles = new Set<string>();
  private readonly replacedFiles = new Set<string>();
  private readonly counts = Object.fromEntries(RECORD_TYPES.map((t) => [t, 0])) as Record<
    RecordType,
    number
  >;
  private records = 0;
  private receipts = 0;

  constructor(
    private readonly store: ReceiptStore,
    private readonly baseDir: string,
  ) {}

  pendingCount(): number {
    return Object.values(this.pending).reduce((sum, rows) => sum + rows.size, 0);
  }

  async add(trx: Db, line: number, value: unknown): Promise<void> {
    let record: ParsedRecord;
    try {
      record = parseRecord(value);
    } catch (error) {
      if (error instanceof FieldError) throw new ImportError(line, error.field, error.problem);
      throw error;
    }
    if (record.type === 'company') {
      this.companies.add(record.row.id);
      this.pending.companies.set(record.row.id, { line, row: record.row });
    } else {
      const companyId = record.row.company_id;
      await this.requireCompany(trx, line, companyId);
      switch (record.type) {
        case 'employee':
          this.claim(line, 'employee', record.row.id, companyId);
          this.pending.employees.set(record.row.id, { line, row: record.row });
          break;
        case 'leave_type':
          this.claim(line, 'leave_type', record.row.id, companyId);
          this.pending.leave_types.set(record.row.id, { line, row: record.row });
          break;
        case 'expense_category':
          this.claim(line, 'expense_category', record.row.id, companyId);
          this.pending.expense_categories.set(record.row.id, { line, row: record.row });
          break;
        case 'leave': {
          const { row } = record;
          await this.requireParent(
            trx,
            line,
            'employee_id',
            'employee',
            row.employee_id,
            companyId,
          );
          await this.requireParent(
            trx,
            line,
            'leave_type_id',
            'leave_type',
            row.leave_type_id,
            companyId,
          );
          if (row.substitute_employee_id != null) {
            await this.requireParent(
              trx,
              line,
              'substitute_employee_id',
              'employee',
              row.substitute_employee_id,
              companyId,
            );
          }
          this.checkSameBatchOwner(
            line,
            this.pending.leaves.get(row.id)?.row.company_id,
            companyId,
            'leave',
            row.id,
          );
          this.pending.leaves.set(row.id, { line, row, attachments: record.attachments });
          break;
        }
        case 'expense': {
          const { row } = record;
          await this.requireParent(
            trx,
            line,
            'employee_id',
            'employee',
            row.employee_id,
            companyId,
          );
          await this.requireParent(
            trx,
            line,
            'category_id',
            'expense_category',
            row.category_id,
            companyId,
          );
          this.checkSameBatchOwner(
            line,
            this.pending.expenses.get(row.id)?.row.company_id,
            companyId,
            'expense',
            row.id,
          );
          const receipt = record.receiptPath
            ? await this.storeReceipt(line, row.id, companyId, record.receiptPath)
            : null;
          this.pending.expenses.set(row.id, { line, row, items: record.items, receipt });
          break;
        }
      }
    }
    this.counts[record.type] += 1;
    this.records += 1;
  }

  async flush(trx: Db): Promise<void> {
    const batches = this.pending;
    this.pending = emptyPending();
    const outcome = await writeBatches(trx, batches);
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

  /**
   * In the import's transaction: every company it touched gets a new data version, so nothing
   * cached from that company's data before the commit is served after it.
   */
  async bumpDataVersions(trx: Db): Promise<void> {
    const ids = [...this.companies];
    for (let start = 0; start < ids.length; start += BATCH_SIZE) {
      await trx
        .updateTable('companies')
        .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
        .where('id', 'in', ids.slice(start, start + BATCH_SIZE))
        .execute();
    }
  }

  private async requireCompany(trx: Db, line: number, companyId: number): Promise<void> {
    if (this.companies.has(companyId)) return;
    const found = await trx
      .selectFrom('companies')
      .select('id')
      .where('id', '=', companyId)
      .executeTakeFirst();
    if (!found) {
      throw new ImportError(
        line,
        'company_id',
        `company ${companyId} not found (companies must come first)`,
      );
    }
    this.companies.add(companyId);
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
  private async requireParent(
    trx: Db,
    line: number,
    field: string,
    kind: ParentKind,
    id: number,
    companyId: number,
  ): Promise<void> {
    let owner = this.owners[kind].get(id);
    if (owner === undefined) {
      const stored = await trx
        .selectFrom(PARENT_TABLES[kind])
        .select('company_id')
        .where('id', '=', id)
        .executeTakeFirst();
      if (stored) {
        owner = stored.company_id;
        this.owners[kind].set(id, owner);
      }
    }
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
    const inside = relative(this.baseDir, absolute);
    if (isAbsolute(path) || inside.startsWith('..') || isAbsolute(inside)) {
      throw new ImportError(line, field, 'must be a path inside the import file’s folder');
    }
    const info = await stat(absolute).catch(() => null);
    if (!info?.isFile()) throw new ImportError(line, field, `file ${path} not found`);
    if (info.size > RECEIPT_MAX_BYTES)
      throw new ImportError(line, field, 'file is larger than 25 MB');
    const bytes = await readFile(absolute);
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
