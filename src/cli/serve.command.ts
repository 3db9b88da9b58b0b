import type { Command } from 'commander';
import { loadServerConfig } from '../config.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import { createDemoCompany, DEFAULT_DEMO_EMPLOYEES } from '../demo/demo.ts';
import { FileReceiptStore } from '../receipts/fs-store.ts';
import { apiUrl, startServer } from '../server.ts';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('start the service (the embedded SQLite default applies pending migrations)')
    .option('--demo', 'on an empty database, create a demo company first and print its key')
    .action(async (options: { demo?: boolean }) => {
      const config = loadServerConfig();
      let demoKey: string | null = null;
      const seedDemo = async (database: DatabaseHandle) => {
        const existing = await database.db.selectFrom('companies').select('id').limit(1).execute();
        if (existing.length > 0) return;
        const demo = await createDemoCompany(database, new FileReceiptStore(config.receiptsDir), {
          employees: DEFAULT_DEMO_EMPLOYEES,
        });
        demoKey = demo.key;
      };
      const server = await startServer(config, {
        beforeListen: options.demo ? seedDemo : undefined,
      });
      const url = apiUrl(config, server.app);
      const lines = [`Company Data API listening on ${url}`];
      if (demoKey) {
        lines.push(
          'Created a demo company. Its API key (shown once, store it now):',
          `  ${demoKey}`,
          'Try:',
          `  curl -H "Authorization: Bearer ${demoKey}" ${url}/me`,
        );
      } else if (options.demo) {
        lines.push(
          'Using the existing data. A new key: npx cdapi keys create --company 1 --name dev',
        );
      }
      process.stderr.write(`${lines.join('\n')}\n`);

      // SIGTERM (or Ctrl-C): stop accepting, finish in-flight requests, close the database, exit 0.
      const shutdown = (signal: string) => {
        server.app.log.info({ signal }, 'shutting down');
        server.close().then(
          () => process.exit(0),
          (error: unknown) => {
            server.app.log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
}
