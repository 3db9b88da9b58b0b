/**
 * A migration that failed, named (null when the migrator failed before one ran). The driver's
 * code stays, so the CLI tells a busy SQLite database as it does for any command (another
 * writer: run it again), with the migration's name. A module of its own, so the CLI can
 * recognise it without loading the migrations.
 */
export class MigrationError extends Error {
  readonly migration: string | null;
  readonly code: unknown;

  constructor(migration: string | null, reason: string, cause: unknown) {
    super(`migration ${migration === null ? '' : `${migration} `}failed: ${reason}`, { cause });
    this.migration = migration;
    this.code = (cause as { code?: unknown }).code;
  }
}
