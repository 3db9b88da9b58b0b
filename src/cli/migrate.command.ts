import type { Command } from 'commander';
import { count, print, withDatabase } from './context.ts';
import { MIGRATE_HELP } from './help.ts';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (safe to run again)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', MIGRATE_HELP)
    .action(async (options: { json?: boolean }) => {
      const { migrateDatabase } = await import('../db/migrate.ts');
      const outcome = await withDatabase(({ handle }) => migrateDatabase(handle), {
        migrate: false,
        creates: true,
      });
      print(options.json, outcome, () =>
        outcome.newer
          ? `Database is up to date; it also holds ${count(outcome.newer.length, 'migration')} of a newer release (${outcome.newer.join(', ')}), left alone.`
          : outcome.applied.length === 0
            ? 'Database is up to date.'
            : `Applied ${count(outcome.applied.length, 'migration')}: ${outcome.applied.join(', ')}`,
      );
    });
}
