import type { Db } from './database.ts';

export interface ReceiptFiles {
  originalKey: string;
  originalContentType: string;
  originalSize: number;
  processedKey: string | null;
  processedSize: number | null;
}

/** The expense's receipt files; `expense: false` when the company has no such expense. */
export async function findReceipt(
  db: Db,
  companyId: number,
  expenseId: number,
): Promise<{ expense: false } | { expense: true; receipt: ReceiptFiles | null }> {
  const row = await db
    .selectFrom('expenses as x')
    .leftJoin('receipts as r', (join) =>
      join.onRef('r.company_id', '=', 'x.company_id').onRef('r.expense_id', '=', 'x.id'),
    )
    .select([
      'r.original_key',
      'r.original_content_type',
      'r.original_size',
      'r.processed_key',
      'r.processed_size',
    ])
    .where('x.company_id', '=', companyId)
    .where('x.id', '=', expenseId)
    .executeTakeFirst();
  if (!row) return { expense: false };
  if (row.original_key === null) return { expense: true, receipt: null };
  return {
    expense: true,
    receipt: {
      originalKey: row.original_key,
      originalContentType: row.original_content_type as string,
      originalSize: row.original_size as number,
      processedKey: row.processed_key,
      processedSize: row.processed_size,
    },
  };
}
