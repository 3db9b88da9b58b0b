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

const toReceiptFiles = (row: {
  original_key: string;
  original_content_type: string;
  original_sha256: string;
  processed_key: string;
}): ReceiptFiles => ({
  originalKey: row.original_key,
  originalContentType: row.original_content_type,
  originalSha256: row.original_sha256,
  processedKey: row.processed_key,
});

/** The expense's receipt files; `expense: false` when the company has no such expense. */
export async function findReceipt(
  db: Db,
  companyId: number,
  expenseId: number,
): Promise<{ expense: false } | { expense: true; receipt: ReceiptFiles | null }> {
  const expense = await db
    .selectFrom('expenses')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', expenseId)
    .executeTakeFirst();
  if (!expense) return { expense: false };
  return { expense: true, receipt: await findReceiptOfExpense(db, companyId, expenseId) };
}

/** The receipt of one of the company's expenses. */
export async function findReceiptOfExpense(
  db: Db,
  companyId: number,
  expenseId: number,
): Promise<ReceiptFiles | null> {
  const row = await db
    .selectFrom('receipts')
    .select(COLUMNS)
    .where('company_id', '=', companyId)
    .where('expense_id', '=', expenseId)
    .executeTakeFirst();
  return row ? toReceiptFiles(row) : null;
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
