import type { Db, ImportStatsTable } from './database.ts';

export type ImportOutcome = ImportStatsTable['outcome'];

export interface ImportRun {
  outcome: ImportOutcome;
  durationMs: number;
  /** Records the run imported (0 for a failed run: it imported none). */
  records: number;
  finishedMs: number;
}

/** Adds one `cdapi import` run to its outcome's running totals, in one statement. */
export async function recordImportRun(db: Db, run: ImportRun): Promise<void> {
  const durationMs = Math.round(run.durationMs);
  await db
    .updateTable('import_stats')
    .set((eb) => ({
      runs: eb('runs', '+', 1),
      records: eb('records', '+', run.records),
      duration_ms: eb('duration_ms', '+', durationMs),
      last_duration_ms: durationMs,
      last_finished_ms: run.finishedMs,
    }))
    .where('outcome', '=', run.outcome)
    .execute();
}

export async function readImportStats(db: Db) {
  return db
    .selectFrom('import_stats')
    .select(['outcome', 'runs', 'records', 'duration_ms', 'last_duration_ms', 'last_finished_ms'])
    .execute();
}
