import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { ConfigError } from '../config-error.ts';

/**
 * `DATABASE_URL` read into the database it names, and where a SQLite file keeps what belongs
 * to it (its receipt store, its signing secret), its symbolic links followed.
 */

export type DatabaseTarget =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'postgres'; url: string };

const DEFAULT_DATABASE_FILE = 'company-data.db';
export const DEFAULT_DATABASE_URL = `sqlite:./data/${DEFAULT_DATABASE_FILE}`;

export function parseDatabaseUrl(value: string, variable = 'DATABASE_URL'): DatabaseTarget {
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path.trim() === '')
      throw new ConfigError(
        variable,
        'sqlite: needs a file path, e.g. sqlite:./data/company-data.db',
      );
    // A path ending in a separator names a folder; resolved, it would name a file of its name.
    if (path.endsWith('/') || path.endsWith(sep)) {
      throw new ConfigError(
        variable,
        `${path} names a folder: give the database file's path, e.g. sqlite:${path}company-data.db`,
      );
    }
    // SQLite's URI options would be read as part of the file's name (`a.db?mode=ro`).
    if (path.includes('?')) {
      throw new ConfigError(
        variable,
        `sqlite: takes a file path alone, without options (?…): ${path.slice(0, path.indexOf('?'))}`,
      );
    }
    if (path === ':memory:') return { dialect: 'sqlite', path };
    // A loop of links is told here, by name, before anything is made beside the file (SQLite
    // would say only `unable to open database file`).
    throughLinks(resolve(path), variable);
    return { dialect: 'sqlite', path: resolve(path) };
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(
        variable,
        'is not a valid postgres:// URL (a password holding /, #, ? or @ is percent-encoded: %2F, %23, %3F, %40)',
      );
    }
    return { dialect: 'postgres', url: value };
  }
  throw new ConfigError(variable, 'must start with sqlite:, postgres:// or postgresql://');
}

/**
 * What a SQLite database file keeps beside it (its receipt store, its signing secret), so a
 * scratch database never writes into (or deletes from) another database's: `name` beside
 * `company-data.db` (the default database, hence `./data/receipts`, `./data/signing-secret`),
 * `NAME-name` beside any other `NAME.db`. Null for PostgreSQL, which has no file to put it
 * beside (instances and `cdapi import` must name the store and the secret they share), and for
 * an in-memory database.
 */
export function besideDatabase(database: DatabaseTarget, name: string): string | null {
  if (database.dialect !== 'sqlite' || database.path === ':memory:') return null;
  const path = throughLinks(database.path);
  const file = basename(path);
  const stem = file.slice(0, file.length - extname(file).length) || file;
  return join(dirname(path), file === DEFAULT_DATABASE_FILE ? name : `${stem}-${name}`);
}

/**
 * The file a path names once its symbolic links are followed, so a database reached through a
 * link keeps its store and secret beside the file itself, as every other path to it does; a
 * link to a file not made yet leads to the name SQLite will make.
 */
export function throughLinks(path: string, variable = 'DATABASE_URL'): string {
  try {
    return realpathSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw linkLoop(path, variable);
    // Not there yet: follow the links that are (at most 40, as the system does).
    let current = resolve(path);
    for (let hops = 0; hops < 40; hops += 1) {
      try {
        current = resolve(dirname(current), readlinkSync(current));
      } catch {
        return current;
      }
    }
    throw linkLoop(path, variable);
  }
}

function linkLoop(path: string, variable: string): ConfigError {
  return new ConfigError(
    variable,
    `${path} is a loop of symbolic links (or a chain of more than 40)`,
  );
}
