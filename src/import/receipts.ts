import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Db, NewReceipt } from '../db/database.ts';
import { receiptFilesInUse } from '../db/receipts.queries.ts';
import { sniffImageType } from '../receipts/image-type.ts';
import { processReceipt, UnreadableImageError } from '../receipts/process.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { ImportError } from './import-error.ts';

const RECEIPT_MAX_BYTES = 25 * 1024 * 1024;
const RECEIPT_MAX_SIZE = `${RECEIPT_MAX_BYTES / 1024 / 1024} MiB (${RECEIPT_MAX_BYTES.toLocaleString('en-US')} bytes)`;

/**
 * The receipt images an import stores: each original byte for byte and its processed variant,
 * content-addressed per company. Remembers the files it added (removed again when the import
 * fails) and those replaced rows used (removed once the import has committed).
 */
export class ReceiptIngest {
  /** Receipt images stored so far. */
  count = 0;
  private readonly addedFiles = new Set<string>();
  private readonly replacedFiles = new Set<string>();
  /** The import folder with every link in its path followed, once it is needed. */
  private realBaseDir: Promise<string> | undefined;

  private readonly store: ReceiptStore;
  private readonly baseDir: string;

  constructor(store: ReceiptStore, baseDir: string) {
    this.store = store;
    this.baseDir = baseDir;
  }

  /** Stores a receipt's original byte for byte and its processed variant, made now. */
  async ingest(
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
    // The path as written, as the system reads it: resolve() would make `1.jpg/`, `1.jpg/.` or
    // `no-such-folder/../1.jpg` the file, which the system refuses.
    const real = await realpath(`${this.baseDir}${sep}${path}`).catch(
      (error: NodeJS.ErrnoException) => {
        throw new ImportError(line, field, unreachableReceipt(path, error.code));
      },
    );
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
      throw new ImportError(
        line,
        field,
        `${path} is not a JPEG, PNG, WebP, HEIC, AVIF or TIFF image`,
      );
    let processed: Buffer;
    try {
      processed = await processReceipt(bytes);
    } catch (error) {
      if (error instanceof UnreadableImageError) {
        throw new ImportError(line, field, `${path} ${error.message}`);
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
    this.count += 1;
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

  /** Files that stored rows used before a batch replaced them. */
  noteReplaced(keys: Iterable<string>): void {
    for (const key of keys) this.replacedFiles.add(key);
  }

  /** After a failed import: files this import added that no committed row uses. */
  async removeAdded(db: Db): Promise<void> {
    await this.removeUnreferenced(db, this.addedFiles);
  }

  /** After a successful import: files of receipts that were replaced and are now unused. */
  async removeReplaced(db: Db): Promise<void> {
    await this.removeUnreferenced(db, this.replacedFiles);
  }

  private async putOnce(key: string, bytes: Uint8Array): Promise<void> {
    if (await this.store.exists(key)) return;
    await this.store.put(key, bytes);
    this.addedFiles.add(key);
  }

  private async removeUnreferenced(db: Db, keys: Set<string>): Promise<void> {
    const used = await receiptFilesInUse(db, keys);
    for (const key of keys) {
      if (!used.has(key)) await this.store.delete(key);
    }
  }
}

/** Whether `path` lies inside the folder `dir` (both absolute, resolved the same way). */
function isInside(dir: string, path: string): boolean {
  const inside = relative(dir, path);
  return inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside);
}

/** Why the system found no file at a receipt's path, by the code of its refusal. */
function unreachableReceipt(path: string, code: string | undefined): string {
  if (code === 'ELOOP') return `${path} is a loop of symbolic links`;
  if (code === 'ENOTDIR') return `${path} goes through a file as if it were a folder`;
  return `file ${path} not found`;
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
    if (!info.isFile()) {
      throw new ImportError(line, field, `${path} is not a file (a directory, FIFO or device)`);
    }
    if (info.size > RECEIPT_MAX_BYTES) {
      throw new ImportError(line, field, `${path} is larger than ${RECEIPT_MAX_SIZE}`);
    }
    return await file.readFile();
  } finally {
    await file.close();
  }
}
