import { type DatabaseHandle, type SqliteFile, sqliteFileOf } from '../db/connect.ts';
import { refreshListSamples } from '../db/list-samples-refresh.ts';
import { SAMPLED_LIST_NAMES, type SampledListName } from '../db/sampled-lists.ts';
import { refreshPlannerStatistics } from '../db/statistics.ts';
import { IMPORTED_TABLES } from '../resources/index.ts';
import { settleAll } from '../settled.ts';
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
 * Where `refreshDerived` works on a SQLite file (elsewhere it works on this thread, see
 * there): `none` on this thread alone; `beside` on this thread and on a thread of its own
 * (`derived-thread.ts`) at once, each sampling a list; `all` on threads of their own only,
 * as the admin API does inside the service, whose event loop every request needs
 * (better-sqlite3 runs each statement to its end on the calling thread).
 */
export type DerivedThreads = 'none' | 'beside' | 'all';

/** One step of `refreshDerived` done by a thread of `derived-thread.ts`. */
export type DerivedJob =
  | { file: SqliteFile; samplesOf: SampledListName }
  | { file: SqliteFile; statistics: true };

/**
 * What an import derives from the committed data: the list samples of the lists it changed,
 * then the query planner's statistics. The leaves and the expenses are sampled at once: on
 * PostgreSQL each on a connection of its own; on a SQLite file with `threads` other than
 * `none`, each on a connection of its own to the file and a thread of its own (the large bench
 * company's two lists took 13–16 s in turn, one core idle, and 8–9 s at once). An in-memory
 * SQLite database has one connection: the lists are sampled in turn. A step that fails (a
 * write lock another import holds past the busy timeout) leaves the records committed: it is
 * told in the returned list (see `afterCommit`), and the next import, of any company, does it
 * again. Until then the lists are read as if they had no samples: slower, not different.
 */
export async function refreshDerived(
  handle: DatabaseHandle,
  threads: DerivedThreads,
  onStep?: OnCommitStep,
): Promise<string[]> {
  const file = handle.dialect === 'sqlite' && threads !== 'none' ? sqliteFileOf(handle) : null;
  const onThread = (job: DerivedJob) =>
    runOnThread<void>(import.meta.url, 'derived-thread', job).result;
  onStep?.({ name: 'samples' });
  const samples = await afterCommit('making the list samples', async () => {
    if (file) {
      const here = threads === 'beside' ? SAMPLED_LIST_NAMES[0] : undefined;
      // The threads' jobs are posted before this thread starts its own list, which holds it.
      const onThreads = SAMPLED_LIST_NAMES.filter((name) => name !== here).map((samplesOf) =>
        onThread({ file, samplesOf }),
      );
      await settleAll([...onThreads, ...(here ? [refreshListSamples(handle, [here])] : [])]);
    } else if (handle.dialect === 'postgres') {
      await settleAll(SAMPLED_LIST_NAMES.map((name) => refreshListSamples(handle, [name])));
    } else {
      await refreshListSamples(handle);
    }
  });
  onStep?.({ name: 'statistics' });
  const statistics = await afterCommit("refreshing the query planner's statistics", () =>
    file && threads === 'all' ? onThread({ file, statistics: true }) : refreshStatistics(handle),
  );
  return [samples, statistics].filter((failure) => failure !== null);
}

/** The query planner's statistics of the tables an import writes. */
export function refreshStatistics(handle: DatabaseHandle): Promise<void> {
  return refreshPlannerStatistics(handle, [...IMPORTED_TABLES, ...SUMMARY_TABLES]);
}

/**
 * A step after the commit, which cannot undo it: null when it is done, else what failed and
 * what comes of it (`making the list samples failed (database is locked); the next import
 * does it again`), for the import's summary (`unfinished_steps`). The steps after it run all
 * the same.
 */
export async function afterCommit(
  step: string,
  run: () => Promise<void>,
  consequence = 'the next import does it again',
): Promise<string | null> {
  try {
    await run();
    return null;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return `${step} failed (${reason}); ${consequence}`;
  }
}
