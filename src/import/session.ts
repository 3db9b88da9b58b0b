import type { Db, NewReceipt } from '../db/database.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { FieldError } from '../resources/fields.ts';
import { RECORD_TYPES, type RecordType } from '../resources/index.ts';
import { ImportError } from './import-error.ts';
import { ReceiptIngest } from './receipts.ts';
import { type ParsedRecord, parseRecord } from './records.ts';
import { ownedByAnother, References } from './references.ts';
import { emptyPending, flatten } from './rows.ts';
import type { ImportTransaction } from './transaction.ts';

export interface ImportSummary {
  records: number;
  counts: Record<RecordType, number>;
  receipts: number;
}

/**
 * One import's records on their way in: each is parsed, its references checked, its receipt
 * stored, and its rows queued until the batch is flushed to the transaction.
 */
export class ImportSession {
  private readonly references = new References();
  readonly receipts: ReceiptIngest;
  private pending = emptyPending();
  /** Records added since the last flush, and the items and attachments they bring. */
  pendingCount = 0;
  pendingChildren = 0;
  private readonly counts = Object.fromEntries(RECORD_TYPES.map((d) => [d.type, 0])) as Record<
    RecordType,
    number
  >;
  private records = 0;

  constructor(store: ReceiptStore, baseDir: string) {
    this.receipts = new ReceiptIngest(store, baseDir);
  }

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
      pending.set(row.id, { line, row, children, receipt });
      return this.counted(record);
    };
    if (!receiptPath) return queue(null);
    return this.receipts.ingest(line, row.id, row.company_id as number, receiptPath).then(queue);
  }

  private counted(record: ParsedRecord): undefined {
    this.counts[record.descriptor.type as RecordType] += 1;
    this.records += 1;
    this.pendingCount += 1;
    for (const rows of Object.values(record.children)) this.pendingChildren += rows.length;
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
      throw ownedByAnother(line, label, id, ownerCompanyId);
    }
    this.receipts.noteReplaced(outcome.replacedReceiptKeys);
  }

  /** Every company the import touched: each gets a new data version with the commit. */
  companyIds(): number[] {
    return this.references.companyIds();
  }

  summary(): ImportSummary {
    return { records: this.records, counts: { ...this.counts }, receipts: this.receipts.count };
  }
}
