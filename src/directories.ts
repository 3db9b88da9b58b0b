import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/*
 * `mkdir -p` that always returns. Node's own (`{ recursive: true }`) answers a folder's ENOENT
 * by making its parent and trying again, so where a parent exists but refuses the child with
 * ENOENT (any path under /proc or /sys) it never returns and spins at a full core: a
 * `RECEIPTS_DIR=/proc/receipts` import, or a `DATABASE_URL=sqlite:/proc/x/a.db` start, hung
 * for ever. Here the missing folders are found first, then each is made once, outermost first,
 * and the first error stands.
 */

/** Makes `path` and the folders above it that are missing; throws the first failure. */
export function makeDirectorySync(path: string): void {
  for (const folder of missingFolders(path)) {
    try {
      mkdirSync(folder);
    } catch (error) {
      // Made by someone else meanwhile: fine, as long as it is a folder.
      if (!(isCode(error, 'EEXIST') && statSync(folder, { throwIfNoEntry: false })?.isDirectory()))
        throw error;
    }
  }
}

/** `path` unless it is a folder, and its ancestors that do not exist, outermost first. */
function missingFolders(path: string): string[] {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) return [];
  const missing = [path];
  for (let folder = dirname(path); !existsSync(folder); folder = dirname(folder)) {
    missing.unshift(folder);
    if (dirname(folder) === folder) break;
  }
  return missing;
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}
