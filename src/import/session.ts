import type { Db, NewReceipt } from '../db/database.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { FieldError } from '../resources/fields.ts';
import { RECORD_TYPES, type RecordType } from '../resources/index.ts';
import { ImportError } from './import-error.ts';
import { ReceiptIngest } from './receipts.ts';
import { isDelete, type ParsedDelete, type ParsedRecord, parseRecord } from './records.ts';
import { ownedByAnother, References } from './references.ts';
import { type DeleteBatch, emptyPending, flatten } from './rows.ts';
import type { ImportTransaction } from './transaction.ts';

export interface ImportSummary {
  records: number;
  counts: Record<RecordType, number>;
  /** Delete lines, by the type they name (an id the company did not have counts too). */
  deletes: Record<RecordType, number>;
  /** Of those, the lines whose id the company did not have: they changed nothing. */
  absent_deletes: Record<RecordType, number>;
  /** The companies the file's lines name (a company line's own id included), ascending. */
  company_ids: number[];
  receipts: number;
  /**
   * SQLite: records were deleted, and a read held the write-ahead log past the busy timeout,
   * so their old values are still in the -wal file (src/db/erasure.ts).
   */
  deleted_values_in_wal: boolean;
  /**
   * Steps after the commit that failed, each with what comes of it (see `afterCommit`): the
   * records are committed all the same.
   */
  unfinished_steps: string[];
}

/** Records each type's delete lines removed: the lines less those whose id was not there. */
export const deletedRecords = (summary: ImportSummary, type: RecordType): number =>
  summary.deletes[type] - summary.absent_deletes[type];

const zeroCounts = () =>
  Object.fromEntries(RECORD_TYPES.map((d) => [d.type, 0])) as Record<RecordType, number>;

/**
 * One import's records on their way in: each is parsed, its references checked, its receipt
 * stored, and its rows queued until the batch is flushed to the transaction.
 */
export class ImportSession {
  private readonly references = new References();
  readonly receipts: ReceiptIngest;
  private pending = emptyPending();
  /**
   * Delete lines since the last flush, all of one type. A batch holds either records or delete
   * lines of one type, so that both are written in the order of the file.
   */
  private deletes: DeleteBatch | null = null;
  /** Records (or delete lines) added since the last flush, and the items and attachments they bring. */
  pendingCount = 0;
  pendingChildren = 0;
  private readonly counts = zeroCounts();
  private readonly deleteCounts = zeroCounts();
  private readonly absentDeleteCounts = zeroCounts();
  private records = 0;
  private readonly companyIds = new Set<number>();

  constructor(store: ReceiptStore, baseDir: string) {
    this.receipts = new ReceiptIngest(store, baseDir);
  }

  /** One line's record, or an ImportError naming its first bad field. */
  parse(line: number, value: unknown): ParsedRecord | ParsedDelete {
    try {
      return parseRecord(value);
    } catch (error) {
      if (error instanceof FieldError) throw new ImportError(line, error.field, error.problem);
      throw error;
    }
  }

  /** Whether what is pending must be written before `record` joins a batch. */
  mustFlushBefore(record: ParsedRecord | ParsedDelete): boolean {
    if (this.pendingCount === 0) return false;
    if (!isDelete(record)) return this.deletes !== null;
    return this.deletes === null || this.deletes.type !== record.descriptor.type;
  }

  /**
   * Checks one record and queues its rows. Returns a promise only when it has to look up a
   * record it names in the database, or store a receipt.
   */
  add(reader: Db, line: number, record: ParsedRecord | ParsedDelete): Promise<void> | undefined {
    if (isDelete(record)) {
      const unknown = this.references.unknownCompany(record);
      if (unknown.length > 0) {
        return this.references.lookUp(reader, unknown).then(() => this.acceptDelete(line, record));
      }
      return this.acceptDelete(line, record);
    }
    const unknown = this.references.unknown(record);
    if (unknown.length > 0) {
      return this.references.lookUp(reader, unknown).then(() => this.accept(line, record));
    }
    return this.accept(line, record);
  }

  /** Checks the references of a record (all known by now) and queues its rows. */
  private accept(line: number, record: ParsedRecord): Promise<void> | undefined {
    const { row, children, receiptPath } = record;
    const pending = this.pending[record.descriptor.type as RecordType];
    this.references.check(line, record, pending.get(row.id)?.row.company_id);
    const queue = (receipt: NewReceipt | null) => {
      // The same record earlier in this batch: its receipt files are unused unless this one has
      // them too (checked after the commit).
      const earlier = pending.get(row.id)?.receipt;
      if (earlier) this.receipts.noteReplaced([earlier.original_key, earlier.processed_key]);
      pending.set(row.id, { line, row, children, receipt });
      return this.counted(record);
    };
    if (!receiptPath) return queue(null);
    return this.receipts.ingest(line, row.id, row.company_id as number, receiptPath).then(queue);
  }

  private acceptDelete(line: number, record: ParsedDelete): undefined {
    this.references.checkDelete(line, record);
    const type = record.descriptor.type as RecordType;
    this.deletes ??= { type, lines: [], companyIds: [], ids: [] };
    this.deletes.lines.push(line);
    this.deletes.companyIds.push(record.companyId);
    this.deletes.ids.push(record.id);
    this.deleteCounts[type] += 1;
    this.companyIds.add(record.companyId);
    this.records += 1;
    this.pendingCount += 1;
    return undefined;
  }

  private counted(record: ParsedRecord): undefined {
    const type = record.descriptor.type as RecordType;
    this.counts[type] += 1;
    this.companyIds.add((type === 'company' ? record.row.id : record.row.company_id) as number);
    this.records += 1;
    this.pendingCount += 1;
    for (const rows of Object.values(record.children)) this.pendingChildren += rows.length;
    return undefined;
  }

  async flush(transaction: ImportTransaction): Promise<void> {
    const { deletes, pending } = this;
    this.pending = emptyPending();
    this.deletes = null;
    this.pendingCount = 0;
    this.pendingChildren = 0;
    const outcome = deletes
      ? await transaction.delete(deletes)
      : await transaction.write(flatten(pending));
    if (outcome.conflict) {
      const { line, label, id, ownerCompanyId } = outcome.conflict;
      throw ownedByAnother(line, label, id, ownerCompanyId);
    }
    if (outcome.refused) {
      const { line, field, problem } = outcome.refused;
      throw new ImportError(line, field, problem);
    }
    this.receipts.noteReplaced(outcome.replacedReceiptKeys);
    if (deletes) this.absentDeleteCounts[deletes.type] += outcome.absentDeletes;
  }

  summary(): ImportSummary {
    return {
      records: this.records,
      counts: { ...this.counts },
      deletes: { ...this.deleteCounts },
      absent_deletes: { ...this.absentDeleteCounts },
      company_ids: [...this.companyIds].sort((a, b) => a - b),
      receipts: this.receipts.count,
      deleted_values_in_wal: false,
      unfinished_steps: [],
    };
  }
}
