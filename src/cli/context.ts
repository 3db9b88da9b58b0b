import { existsSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { type Config, loadConfig } from '../config.ts';
import { ConfigError } from '../config-error.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import type { DatabaseTarget } from '../db/database-url.ts';

export interface CommandContext {
  config: Config;
  handle: DatabaseHandle;
}

/**
 * Opens the configured database for one command, its schema checked (see ensureSchema). The
 * database modules (Kysely, both drivers, the migrations) load here, when a command needs them:
 * `cdapi --help` or a mistyped option answers without them, and each command loads only its own.
 */
/** The SQLite file the target names when it does not exist yet (opening it makes it), else null. */
export function sqliteFileToMake(database: DatabaseTarget): string | null {
  return database.dialect === 'sqlite' && database.path !== ':memory:' && !existsSync(database.path)
    ? database.path
    : null;
}

export async function withDatabase<T>(
  run: (context: CommandContext) => Promise<T>,
  options: {
    migrate?: boolean;
    /**
     * A command that can start from nothing (import, migrate, demo): a SQLite file that does
     * not exist yet is made. The others administer what those made, so a SQLite path that
     * names no file (mistyped) is an error instead of a new, empty database.
     */
    creates?: boolean;
    /**
     * A command of a few small statements (keys, companies list, activate, deactivate): on
     * PostgreSQL each statement is bounded by DATABASE_STATEMENT_TIMEOUT_MS too, so a server
     * that took the connection and stopped answering is told instead of waited for.
     */
    quick?: boolean;
  } = {},
): Promise<T> {
  const config = loadConfig();
  const absent = sqliteFileToMake(config.database);
  if (!options.creates && absent !== null) {
    const missing = config.databaseUrl
      ? `names ${absent}, which does not exist`
      : `is not set, and its default, ${absent}, does not exist`;
    throw new ConfigError(
      'DATABASE_URL',
      `${missing}: cdapi serve, import, migrate or demo makes the database; check the path`,
    );
  }
  const [{ openDatabase }, { ensureSchema }] = await Promise.all([
    import('../db/connect.ts'),
    import('../db/migrate.ts'),
  ]);
  // Long statements (an import's, a purge's) run as long as they take; opening a connection is
  // always bounded, so a PostgreSQL that does not answer is told instead of waited for. SQLite
  // keeps its own busy timeout.
  const handle = openDatabase(config.database, {
    connectTimeoutMs: config.statementTimeoutMs,
    ...(options.quick && config.database.dialect === 'postgres'
      ? { statementTimeoutMs: config.statementTimeoutMs }
      : {}),
  });
  try {
    if (options.migrate !== false) await ensureSchema(handle);
    return await run({ config, handle });
  } finally {
    await handle.close();
  }
}

export function parseId(label: string) {
  return (value: string): number => {
    if (!/^[1-9]\d{0,15}$/.test(value) || Number(value) > Number.MAX_SAFE_INTEGER) {
      throw new InvalidArgumentError(
        `${label} must be a positive integer of at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1), in plain digits.`,
      );
    }
    return Number(value);
  };
}

/** A whole number from `min` to `max`, written in digits without leading zeros, as ids are. */
export function parseCount(min: number, max: number) {
  return (value: string): number => {
    if (!/^(0|[1-9]\d*)$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(
        `must be a whole number from ${min} to ${max}, in plain digits.`,
      );
    }
    return Number(value);
  };
}

/** `1 employee`, `2 employees`, `12,500 leave types`: a number and its noun, in agreement. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}

/** Prints the machine-readable value with --json, otherwise the human-readable lines. */
export function print(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/**
 * After an import or a purge that deleted records (text output; `--json` has the field): a
 * read held SQLite's write-ahead log, so the deleted values are still on disk (src/db/erasure.ts).
 */
export function noteDeletedValuesInWal(
  summary: { deleted_values_in_wal: boolean },
  json: boolean | undefined,
): void {
  if (!summary.deleted_values_in_wal || json) return;
  process.stderr.write(
    "cdapi: a read held SQLite's write-ahead log past the busy timeout, so the deleted records' old values are still in the database's -wal file; the next import or purge that deletes records empties it, as does stopping every process that has the database open\n",
  );
}

/** Lays rows out as aligned columns under a header. */
export function table(header: string[], rows: Array<Array<string | number | null>>): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
