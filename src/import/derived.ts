import { type DatabaseHandle, sqliteFileOf } from '../db/connect.ts';
import { refreshListSamples } from '../db/list-samples.ts';
import { refreshPlannerStatistics } from '../db/statistics.ts';
import { IMPORTED_TABLES } from '../resources/index.ts';
import { runOnThread } from '../threads.ts';
import type { OnCommitStep } from './transaction.ts';

/**
 * The summaries the import rewrites that queries filter and sum (src/db/expense-texts.ts,
 * leave-counts.ts; the list samples are read whole, by key): PostgreSQL planned a sum over
 * `leave_counts` with no statistics as a scan of the whole table (12.8 ms for a few employees'
 * rows, 1.4 ms with them).
 */
const SUMMARY_TABLES = ['expense_texts', 'leave_counts'];

/**
 * What an import derives from the committed data: the list samples of the lists it changed,
 * then the query planner's statistics. A step that fails (a write lock another import holds
 * past the busy timeout) leaves the records committed, and says so: the next import, of any
 * company, does it again.
 */
export async function refreshDerived(handle: DatabaseHandle, onStep?: OnCommitStep): Promise<void> {
  onStep?.({ name: 'samples' });
  await afterCommit('making the list samples', () => refreshListSamples(handle));
  onStep?.({ name: 'statistics' });
  await afterCommit("refreshing the query planner's statistics", () =>
    refreshPlannerStatistics(handle, [...IMPORTED_TABLES, ...SUMMARY_TABLES]),
  );
}

/** A step after the commit: its failure says the records are committed. */
export async function afterCommit(step: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the records are committed, but ${step} failed (${reason}); the next import does it again`,
      { cause: error },
    );
  }
}

/**
 * `refreshDerived` on a thread of its own (`derived-thread.ts`), with a connection of its own
 * to the SQLite file: better-sqlite3 runs each statement to its end on the calling thread, and
 * the admin API imports from inside the service, whose event loop every request needs (the
 * large bench company's samples take 5–13 s). PostgreSQL and an in-memory database: on this
 * thread, as `refreshDerived`.
 */
export function refreshDerivedOnThread(
  handle: DatabaseHandle,
  onStep?: OnCommitStep,
): Promise<void> {
  const file = sqliteFileOf(handle);
  if (!file) return refreshDerived(handle, onStep);
  return runOnThread<void>(import.meta.url, 'derived-thread', file, { onMessage: onStep }).result;
}
