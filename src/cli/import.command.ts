import type { Command } from 'commander';
import { importFile } from '../import/importer.ts';
import { FileReceiptStore } from '../receipts/fs-store.ts';
import { print, withDatabase } from './context.ts';

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'load an NDJSON file in one transaction: every record, or none (see docs/import-format.md)',
    )
    .argument('<file>', 'NDJSON file, one record a line; receipt paths are relative to its folder')
    .option('--json', 'machine-readable output')
    .action(async (file: string, options: { json?: boolean }) => {
      const summary = await withDatabase(({ config, handle }) =>
        importFile(handle, new FileReceiptStore(config.receiptsDir), file),
      );
      print(options.json, summary, () => {
        const parts = Object.entries(summary.counts)
          .filter(([, n]) => n > 0)
          .map(([type, n]) => `${n} ${type}`);
        return `Imported ${summary.records} records (${parts.join(', ') || 'none'}); ${summary.receipts} receipt file(s).`;
      });
    });
}
