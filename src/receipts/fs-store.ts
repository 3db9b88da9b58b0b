import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { ConfigError } from '../config-error.ts';
import { makeDirectorySync } from '../directories.ts';
import type { ReceiptStore } from './store.ts';

/** Why a folder cannot hold files: its path, its permissions, its file system. */
const UNWRITABLE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EEXIST']);

/** Receipt files under one directory (`RECEIPTS_DIR`). Writes go through a temp file and a rename. */
export class FileReceiptStore implements ReceiptStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`receipt key escapes the store: ${key}`);
    return path;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.write(this.path(key), bytes);
    } catch (error) {
      // A store that cannot be written is the configuration's problem: named, not a bare errno.
      if (!UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
      throw new ConfigError(
        'RECEIPTS_DIR',
        `cannot store receipts in ${this.root}: ${(error as Error).message}`,
      );
    }
  }

  private async write(path: string, bytes: Uint8Array): Promise<void> {
    const temp = join(dirname(path), `.tmp-${randomBytes(6).toString('hex')}`);
    // Two stats when the folder is there (each receipt's): not worth an asynchronous twin. A
    // `delete` of the folder's last file may remove the folder between the two: made again.
    for (let tries = 1; ; tries += 1) {
      makeDirectorySync(dirname(path));
      try {
        await writeFile(temp, bytes);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || tries === 3) throw error;
      }
    }
    // The temp file keeps the folder from being empty, so `delete` leaves it.
    await rename(temp, path);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const info = await stat(this.path(key));
      return info.isFile() ? { size: info.size } : null;
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'ENOENT') return null;
      // RECEIPTS_DIR (or a folder in it) is a file: the configuration's problem, named.
      if (code === 'ENOTDIR' || code === 'EACCES') {
        throw new ConfigError(
          'RECEIPTS_DIR',
          `cannot read receipts in ${this.root}: ${(error as Error).message}`,
        );
      }
      throw error;
    }
  }

  read(key: string): Readable {
    return createReadStream(this.path(key));
  }

  /** Removes the file, then its folders up to the store's own while they are empty. */
  async delete(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // A purged company's folders (`12/originals`, `12/processed`, `12`) go with its last files.
    for (let folder = dirname(path); folder !== this.root; folder = dirname(folder)) {
      try {
        await rmdir(folder);
      } catch {
        return; // not empty (ENOTEMPTY), or already gone
      }
    }
  }

  /** Files on local disk have no URL of their own: the API's signed file route serves them. */
  async directUrl(): Promise<null> {
    return null;
  }
}
