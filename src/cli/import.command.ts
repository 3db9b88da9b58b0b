import { setImmediate } from 'node:timers/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { requireReceiptsDir } from '../config.ts';
import { stopPretenuring } from '../heap.ts';
import { ImportInterrupted } from '../import/import-error.ts';
import type { ImportSummary } from '../import/session.ts';
import type { RECORD_TYPES } from '../resources/index.ts';
import { count, noteDeletedValuesInWal, print, withDatabase } from './context.ts';
import { IMPORT_HELP } from './help.ts';
import { ImportProgressReporter } from './progress.ts';

interface ImportCommandOptions {
  json?: boolean;
  progress: boolean;
  progressEvery: number;
}

function summaryLine(summary: ImportSummary, recordTypes: typeof RECORD_TYPES): string {
  // Each type as people count it: `1 leave type`, `2 leave types`.
  const parts = recordTypes
    .filter(({ type }) => summary.counts[type] > 0)
    .map(({ type, noun }) => count(summary.counts[type], noun[0], noun[1]));
  for (const { type, noun } of recordTypes) {
    const absent = summary.absent_deletes[type];
    const deleted = summary.deletes[type] - absent;
    if (deleted > 0) parts.push(`${count(deleted, noun[0], noun[1])} deleted`);
    // An erasure that named a wrong id must not read as done.
    if (absent > 0) parts.push(`${count(absent, noun[0], noun[1])} to delete not found`);
  }
  return `Imported ${count(summary.records, 'record')} (${parts.join(', ') || 'none'}); ${count(summary.receipts, 'receipt file')}.`;
}

function secondsOption(value: string): number {
  const seconds = Number(value);
  if (!/^(0|[1-9]\d*)(\.\d+)?$/.test(value) || seconds > 86_400) {
    throw new InvalidArgumentError('must be a number of seconds from 0 to 86400, in plain digits.');
  }
  return seconds;
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'load an NDJSON file in one transaction: every record, or none (see docs/import-format.md)',
    )
    .argument('<file>', 'NDJSON file, one record a line; receipt paths are relative to its folder')
    .option('--json', 'print the summary as JSON; progress and errors on stderr as JSON lines')
    .option('--no-progress', 'print no progress on stderr')
    .option(
      '--progress-every <seconds>',
      'when stderr is not a terminal: a progress line every this many seconds (0: every 64 KiB)',
      secondsOption,
      10,
    )
    .addHelpText('after', IMPORT_HELP)
    .action(async (file: string, options: ImportCommandOptions) => {
      stopPretenuring();
      const [{ importFile }, { FileReceiptStore }, { RECORD_TYPES }, { countedImport }] =
        await Promise.all([
          import('../import/importer.ts'),
          import('../receipts/fs-store.ts'),
          import('../resources/index.ts'),
          import('../services/import.service.ts'),
        ]);
      // Ctrl-C or a service manager's SIGTERM rolls the import back (a second one stops the
      // process at once); see ImportInterrupted. The handlers stay until the process ends: one
      // removed once the import is done would let a signal that came during its last
      // synchronous steps, and is handled only now, kill the process with 130 or 143, the codes
      // of an import rolled back.
      const interruption = new AbortController();
      const onSignal = (signal: 'SIGINT' | 'SIGTERM') =>
        interruption.abort(new ImportInterrupted(signal));
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const summary = await withDatabase(
        async ({ config, handle }) => {
          const store = new FileReceiptStore(requireReceiptsDir(config));
          const progress = options.progress
            ? new ImportProgressReporter({
                file,
                out: process.stderr,
                json: options.json === true,
                everyMs: options.progressEvery * 1000,
              })
            : null;
          try {
            return await countedImport(
              handle,
              async () => {
                const imported = await importFile(handle, store, file, {
                  onProgress: progress?.update,
                  onStep: progress?.startStep,
                  changesRetentionDays: config.changesRetentionDays,
                  signal: interruption.signal,
                });
                progress?.done();
                return imported;
              },
              (error) =>
                process.stderr.write(
                  `cdapi: the import succeeded, but could not be counted for the metrics: ${error.message}\n`,
                ),
            );
          } finally {
            progress?.end();
          }
        },
        { creates: true },
      );
      // A signal that came while the commit's steps held the event loop is handled only when
      // the loop next polls, and it must count as one that came while committing: two turns
      // of the loop, since the first may end a poll that began before the signal came.
      await setImmediate();
      await setImmediate();
      // With --json the summary on stdout says it all.
      if (interruption.signal.aborted && !options.json) {
        process.stderr.write(
          `cdapi: ${(interruption.signal.reason as ImportInterrupted).signal} came while the import was committing: it is complete\n`,
        );
      }
      print(options.json, summary, () => summaryLine(summary, RECORD_TYPES));
      noteDeletedValuesInWal(summary, options.json);
      // Told, not failed: the records are committed (`unfinished_steps` in the --json summary).
      if (!options.json) {
        for (const step of summary.unfinished_steps) {
          process.stderr.write(`cdapi: the records are committed, but ${step}\n`);
        }
      }
    });
}
