import type { Readable } from 'node:stream';

/**
 * Where receipt files live. Keys are relative paths such as
 * `12/originals/3f…9a.jpg`; every key starts with the owning company's id. The file-system
 * store is the default; an S3-compatible store implements the same interface.
 */
export interface ReceiptStore {
  /** Stores the bytes under key; replaces nothing that is already there with other bytes. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  exists(key: string): Promise<boolean>;
  stat(key: string): Promise<{ size: number } | null>;
  read(key: string): Readable;
  delete(key: string): Promise<void>;
  /**
   * A URL from which a client may fetch the file without an API key until `expiresAt` (an
   * object store's presigned URL), or null when the store has none and the API serves the
   * file itself through its signed file route (the file-system store).
   */
  directUrl(key: string, options: { expiresAt: Date; contentType: string }): Promise<string | null>;
}
