import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../config-error.ts';
import { besideDatabase, type DatabaseTarget } from '../db/database-url.ts';
import { makeDirectorySync } from '../directories.ts';

/**
 * The key signed receipt URLs are made with: `SIGNING_SECRET`, or for SQLite a secret made once
 * and kept in a file beside the database.
 */

const SIGNING_SECRET_MIN = 32;

/**
 * SQLite keeps a generated secret beside its file (`besideDatabase`), so signed URLs survive
 * restarts and every process of that database, wherever it was started, signs alike; an
 * in-memory database, which lives as long as its process, gets one of its own. With
 * PostgreSQL several instances must share one secret, so it has to be given.
 */
export function resolveSigningSecret(raw: string | undefined, database: DatabaseTarget): string {
  if (raw !== undefined && raw !== '') {
    if (raw.trim().length < SIGNING_SECRET_MIN) {
      throw new ConfigError(
        'SIGNING_SECRET',
        `must be at least ${SIGNING_SECRET_MIN} characters, white space at its ends not counted`,
      );
    }
    return raw;
  }
  if (database.dialect === 'postgres') {
    throw new ConfigError('SIGNING_SECRET', 'is required when DATABASE_URL is PostgreSQL');
  }
  const file = besideDatabase(database, 'signing-secret');
  if (file === null) return randomBytes(32).toString('base64url');
  let secret: string;
  try {
    secret = existsSync(file) ? readFileSync(file, 'utf8').trim() : makeSecretFile(file);
  } catch (error) {
    throw new ConfigError(
      'SIGNING_SECRET',
      `is not set, and the secret kept beside the SQLite database (DATABASE_URL) cannot be read or made at ${file}: ${(error as Error).message}`,
    );
  }
  // An emptied or cut file would sign with a key anyone can guess: refused, as a short
  // SIGNING_SECRET is.
  if (secret.length < SIGNING_SECRET_MIN) {
    throw new ConfigError(
      'SIGNING_SECRET',
      `is not set, and the secret kept at ${file} is shorter than ${SIGNING_SECRET_MIN} characters: remove the file to have a new one made (signed URLs handed out before stop working), or set SIGNING_SECRET`,
    );
  }
  return secret;
}

/**
 * A new secret in `file`, written whole before the file appears (a temporary file linked into
 * place), so a process starting at the same time reads all of it or makes none: when another
 * was first, its secret is the one taken.
 */
function makeSecretFile(file: string): string {
  makeDirectorySync(dirname(file));
  const secret = randomBytes(32).toString('base64url');
  const written = `${file}.${process.pid}.tmp`;
  writeFileSync(written, `${secret}\n`, { mode: 0o600 });
  try {
    try {
      linkSync(written, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
      // A file system without hard links: created in place, as the next best.
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    }
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFileSync(file, 'utf8').trim();
  } finally {
    rmSync(written, { force: true });
  }
}
