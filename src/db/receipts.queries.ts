import { chunks } from './chunks.ts';
import type { Db } from './database.ts';

export interface ReceiptFiles {
  originalKey: string;
  originalContentType: string;
  originalSha256: string;
  processedKey: string;
}

const COLUMNS = [
  'original_key',
  'original_content_type',
  'original_sha256',
  'processed_key',
] as const;

interface ReceiptRow {
  original_key: string;
  original_content_type: string;
  original_sha256: string;
  processed_key: string;
}

const toReceiptFiles = (row: ReceiptRow): ReceiptFiles => ({
  originalKey: row.original_key,
  originalContentType: row.original_content_type,
  originalSha256: row.original_sha256,
  processedKey: row.processed_key,
});

/**
 * The expense's receipt files; `expense: false` when the company has no such expense. One
 * statement, so one snapshot: an import that deletes the expense meanwhile leaves it either
 * with its receipt or gone, never found without the receipt it had.
 */
export async function findReceipt(
  db: Db,
  companyId: number,
  expenseId: number,
): Promise<{ expense: false } | { expense: true; receipt: ReceiptFiles | null }> {
  const row = await db
    .selectFrom('expenses')
    .leftJoin('receipts', (join) =>
      join
        .onRef('receipts.company_id', '=', 'expenses.company_id')
        .onRef('receipts.expense_id', '=', 'expenses.id'),
    )
    .select(COLUMNS.map((column) => `receipts.${column}` as const))
    .where('expenses.company_id', '=', companyId)
    .where('expenses.id', '=', expenseId)
    .executeTakeFirst();
  if (!row) return { expense: false };
  // The receipt's columns are NOT NULL: one present is a receipt row joined.
  const receipt = row.original_key === null ? null : toReceiptFiles(row as ReceiptRow);
  return { expense: true, receipt };
}

/**
 * What a verified signed URL names: the receipt of one of the company's expenses, and whether
 * the company is active (a deactivated company's links stop working with its keys).
 */
export async function findSignedReceipt(
  db: Db,
  companyId: number,
  expenseId: number,
): Promise<{ receipt: ReceiptFiles; companyActive: boolean } | null> {
  const row = await db
    .selectFrom('receipts')
    .innerJoin('companies', 'companies.id', 'receipts.company_id')
    .select([...COLUMNS.map((column) => `receipts.${column}` as const), 'companies.active'])
    .where('receipts.company_id', '=', companyId)
    .where('receipts.expense_id', '=', expenseId)
    .executeTakeFirst();
  return row ? { receipt: toReceiptFiles(row), companyActive: Boolean(row.active) } : null;
}

/**
 * Which of `keys` a receipt row still names, as its original or its processed file: asked
 * before a file is removed (a purge, an import that replaced or failed to store receipts).
 * Read through the indexes of each key column, a chunk of keys a statement.
 */
export async function receiptFilesInUse(db: Db, keys: Iterable<string>): Promise<Set<string>> {
  const used = new Set<string>();
  for (const chunk of chunks([...keys])) {
    const rows = await db
      .selectFrom('receipts')
      .select(['original_key', 'processed_key'])
      .where((eb) => eb.or([eb('original_key', 'in', chunk), eb('processed_key', 'in', chunk)]))
      .execute();
    for (const row of rows) {
      used.add(row.original_key);
      used.add(row.processed_key);
    }
  }
  return used;
}
