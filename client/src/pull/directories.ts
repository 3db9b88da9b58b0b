import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` that always returns. Node's own (`{ recursive: true }`) answers a folder's ENOENT
 * by making its parent and trying again, so under a parent that refuses the child with ENOENT
 * (any path under /proc or /sys) it never returns and spins at a full core. Here the missing
 * folders are found first, then each is made once, outermost first, and the first error stands.
 * Returns the folders it made, outermost first.
 */
export function makeDirectorySync(path: string): string[] {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) return [];
  const missing = [path];
  for (let folder = dirname(path); !existsSync(folder); folder = dirname(folder)) {
    missing.unshift(folder);
    if (dirname(folder) === folder) break;
  }
  const made: string[] = [];
  for (const folder of missing) {
    try {
      mkdirSync(folder);
      made.push(folder);
    } catch (error) {
      // Made by someone else meanwhile: fine, as long as it is a folder.
      const exists = (error as NodeJS.ErrnoException).code === 'EEXIST';
      if (!(exists && statSync(folder, { throwIfNoEntry: false })?.isDirectory())) throw error;
    }
  }
  return made;
}

/** Removes the folders `makeDirectorySync` made, innermost first, as long as they are empty. */
export function removeEmptyDirectoriesSync(made: readonly string[]): void {
  for (const folder of made.toReversed()) {
    try {
      rmdirSync(folder);
    } catch {
      return; // something was written into it, or another process uses it: it stays
    }
  }
}
