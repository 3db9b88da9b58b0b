import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '../client.ts';
import { ApiError, ReceiptError } from '../errors.ts';
import type { Mirror } from './mirror.ts';
import type { Progress } from './progress.ts';

export const receiptFile = (dir: string, expenseId: number) => join(dir, `${expenseId}.jpg`);

/**
 * Brings `dir` in line with the mirror: each expense's receipt (processed variant) is
 * downloaded once, and again only when the expense changed or its file is missing; the file
 * of an expense that is gone or lost its receipt is removed. Returns how many were downloaded.
 */
export async function syncReceipts(
  client: Client,
  mirror: Mirror,
  dir: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<number> {
  const downloaded = mirror.downloadedReceipts();
  const wanted = mirror.expensesWithReceipts();
  const stale = wanted.filter(
    (expense) =>
      downloaded.get(expense.id) !== expense.updated_at ||
      !existsSync(receiptFile(dir, expense.id)),
  );
  const keep = new Set(wanted.map((expense) => expense.id));
  for (const id of downloaded.keys()) {
    if (keep.has(id)) continue;
    rmSync(receiptFile(dir, id), { force: true });
    mirror.markReceipt(id, null);
  }
  if (stale.length === 0) return 0;
  progress.start('receipts', stale.length);
  let count = 0;
  for (const expense of stale) {
    try {
      const receipt = await client.expenses.receipt(expense.id, { variant: 'processed', signal });
      const path = receiptFile(dir, expense.id);
      writeFileSync(`${path}.partial`, receipt.data);
      renameSync(`${path}.partial`, path);
      mirror.markReceipt(expense.id, expense.updated_at);
      count += 1;
    } catch (error) {
      // No image, or one cut short on every attempt: nothing is stored or marked, so the next
      // run asks again.
      if (error instanceof ReceiptError) {
        throw new Error(`receipt of expense ${expense.id}: ${error.message}; nothing stored`);
      }
      // The expense changed or left since the feed was read: the next run catches up.
      if (!(error instanceof ApiError && error.status === 404)) throw error;
      progress.note(`receipt of expense ${expense.id}: ${error.detail}`);
    }
    progress.advance(1);
  }
  progress.finish();
  return count;
}
