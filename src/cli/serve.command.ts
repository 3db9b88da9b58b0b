import { type Command, InvalidArgumentError } from 'commander';
import { forgetAdminTokens, loadServerConfig } from '../config.ts';
import { isListenHost } from '../config-values.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import { DEFAULT_DATABASE_URL } from '../db/database-url.ts';
import { DEFAULT_DEMO_EMPLOYEES } from '../demo/context.ts';
import { restartWithServiceMemorySettings } from '../heap.ts';
import { parseCount, sqliteFileToMake } from './context.ts';
import { SERVE_HELP } from './help.ts';

interface ServeOptions {
  demo?: boolean;
  port?: number;
  host?: string;
  json?: boolean;
}

function hostOption(value: string): string {
  if (!isListenHost(value)) {
    throw new InvalidArgumentError('must be a host name or an IP address.');
  }
  return value;
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('start the service (the embedded SQLite default applies pending migrations)')
    .option(
      '--demo',
      'on an empty database, create a demo company once listening, and print its key',
    )
    .option('--port <port>', 'listen on this port (default: PORT, else 8080)', parseCount(0, 65535))
    .option('--host <host>', 'listen on this address (default: HOST, else 127.0.0.1)', hostOption)
    .option(
      '--json',
      'print the start-up line as JSON: {"url","metrics_url","admin_url","demo_key"} (logs are JSON anyway)',
    )
    .addHelpText('after', SERVE_HELP)
    .action(async (options: ServeOptions) => {
      const config = loadServerConfig(undefined, { port: options.port, host: options.host });
      // A bad configuration has failed by now, before the restart; the admin tokens are still in
      // the environment the restarted process gets.
      restartWithServiceMemorySettings();
      // Only the admin tokens' digests stay in memory, in the configuration.
      forgetAdminTokens();
      const { adminUrl, apiUrl, localApiUrl, metricsUrl, startServer } = await import(
        '../server.ts'
      );
      let demoKey: string | null = null;
      let existingCompany: number | undefined;
      const seedDemo = async (database: DatabaseHandle) => {
        const existing = await database.db
          .selectFrom('companies')
          .select('id')
          .orderBy('id')
          .limit(1)
          .executeTakeFirst();
        existingCompany = existing?.id;
        if (existing) return;
        const [{ createDemoCompany }, { FileReceiptStore }] = await Promise.all([
          import('../demo/demo.ts'),
          import('../receipts/fs-store.ts'),
        ]);
        const demo = await createDemoCompany(database, new FileReceiptStore(config.receiptsDir), {
          employees: DEFAULT_DEMO_EMPLOYEES,
        });
        demoKey = demo.key;
      };
      const newFile = sqliteFileToMake(config.database);
      const server = await startServer(config, {
        listening: options.demo ? seedDemo : undefined,
      });
      // A mistyped path serves an empty database: said once, where the operator looks.
      if (newFile !== null && !options.demo) {
        server.app.log.warn(
          { path: newFile },
          'made a new, empty SQLite database: check DATABASE_URL if an existing one was meant',
        );
      }
      const url = apiUrl(config, server.app);
      const metrics = server.metricsServer ? metricsUrl(config, server.metricsServer) : null;
      const admin = server.adminApp ? adminUrl(config, server.adminApp) : null;
      // On stderr: stdout carries the JSON log, and the demo key must not end up in log files.
      if (options.json) {
        process.stderr.write(
          `${JSON.stringify({ url, metrics_url: metrics, admin_url: admin, demo_key: demoKey })}\n`,
        );
      } else {
        // Where it listens: PUBLIC_BASE_URL is a proxy's address, said beside it.
        const local = localApiUrl(config, server.app);
        const lines = [`Company Data API listening on ${local}`];
        if (url !== local) lines.push(`Clients call it at ${url} (PUBLIC_BASE_URL)`);
        if (metrics) lines.push(`Prometheus metrics on ${metrics}`);
        if (admin) lines.push(`Admin API and panel on ${admin}`);
        if (demoKey) {
          lines.push(
            'Created a demo company. Its API key (shown once, store it now):',
            `  ${demoKey}`,
            'Try:',
            `  curl -H "Authorization: Bearer ${demoKey}" ${local}/me`,
          );
        } else if (existingCompany !== undefined) {
          lines.push(
            `Using the existing data. A new key: ${keysCreateLine(existingCompany, config.databaseUrl)}`,
          );
        }
        process.stderr.write(`${lines.join('\n')}\n`);
      }

      // SIGTERM (or Ctrl-C): stop accepting, finish in-flight requests, close the database, exit 0.
      // SIGHUP the same, but exit 129 as a process the hangup ended: its default action dropped
      // the requests in flight, and a service manager that restarts on failure starts the
      // service again with the settings it has now (there is no reload: they are read at start).
      // A signal during the drain: a second SIGTERM or SIGINT stops the process at once (its
      // default action, the handler being gone), a second hangup changes nothing.
      let stopping = false;
      const shutdown = (signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP') => {
        if (stopping) return;
        stopping = true;
        server.app.log.info({ signal }, 'shutting down');
        const since = performance.now();
        server.close().then(
          () => {
            const durationMs = Math.round(performance.now() - since);
            server.app.log.info({ durationMs }, 'shut down');
            process.exit(signal === 'SIGHUP' ? 129 : 0);
          },
          (error: unknown) => {
            server.app.log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGHUP', () => shutdown('SIGHUP'));
    });
}

/**
 * The command that makes a key for `company` in the database this service runs on: a
 * DATABASE_URL of a SQLite file other than the default is written before it, quoted for the
 * shell; a PostgreSQL one is only named, as it may hold a password, which must not be printed.
 */
function keysCreateLine(company: number, databaseUrl: string | undefined): string {
  const command = `npx cdapi keys create --company ${company} --name dev`;
  if (!databaseUrl || databaseUrl === DEFAULT_DATABASE_URL) return command;
  if (!databaseUrl.startsWith('sqlite:')) return `${command} (with the same DATABASE_URL)`;
  return `DATABASE_URL='${databaseUrl.replaceAll("'", "'\\''")}' ${command}`;
}
