import type { DatabaseHandle } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { type ImportOutcome, recordImportRun } from '../db/import-stats.queries.ts';
import type { ImportSummary } from '../import/session.ts';

/** Every run adds to the totals that the service's metrics report (cdapi_import_*). */
function recordRun(db: Db, outcome: ImportOutcome, started: number, records: number) {
  const durationMs = performance.now() - started;
  return recordImportRun(db, { outcome, durationMs, records, finishedMs: Date.now() });
}

/**
 * Runs one import (`cdapi import FILE` or the admin API's `POST /admin/import`) and counts it
 * for the metrics, failed or not. `onUncounted` hears when a successful run could not be
 * counted: the import's own outcome is the one to report.
 */
export async function countedImport(
  handle: DatabaseHandle,
  run: () => Promise<ImportSummary>,
  onUncounted: (error: Error) => void,
): Promise<ImportSummary> {
  const started = performance.now();
  let summary: ImportSummary;
  try {
    summary = await run();
  } catch (error) {
    // As far as the database allows, at once (an import that found the write lock taken is
    // not answered later for it): the import's own error is the one to report.
    await handle.write((db) => recordRun(db, 'failed', started, 0), 0).catch(() => {});
    throw error;
  }
  await handle
    .write((db) =>
      recordRun(db, summary.records === 0 ? 'empty' : 'succeeded', started, summary.records),
    )
    .catch(onUncounted);
  return summary;
}
