import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { SchemaOutdatedError } from '../db/migrate.ts';
import { limitHeapGrowth } from '../heap.ts';
import { ImportError } from '../import/importer.ts';
import { registerCompanyCommands } from './companies.command.ts';
import { CliError } from './context.ts';
import { registerDemoCommand } from './demo.command.ts';
import { registerImportCommand } from './import.command.ts';
import { registerKeyCommands } from './keys.command.ts';
import { registerMigrateCommand } from './migrate.command.ts';
import { registerServeCommand } from './serve.command.ts';

/** The oldest Node.js the CLI runs on; better-sqlite3's binary crashes on Node 20. */
const MIN_NODE = [22, 12] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
  process.stderr.write(
    `cdapi: Node.js ${MIN_NODE.join('.')} or later is required (this is ${process.version}); npx cdapi runs on the project's own Node\n`,
  );
  process.exit(1);
}

limitHeapGrowth();

const program = new Command('cdapi')
  .description('Company Data API: the read-only HR data service and its administration.')
  .showSuggestionAfterError()
  .exitOverride();

registerServeCommand(program);
registerMigrateCommand(program);
registerImportCommand(program);
registerDemoCommand(program);
registerCompanyCommands(program);
registerKeyCommands(program);

/** Every failure ends as one line on stderr and a non-zero exit code. */
function reason(error: unknown): string {
  if (error instanceof ConfigError) return `configuration: ${error.message}`;
  if (
    error instanceof ImportError ||
    error instanceof CliError ||
    error instanceof SchemaOutdatedError
  ) {
    return error.message;
  }
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '3D000' || code === '28P01') {
    return `cannot connect to the database: ${(error as Error).message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its own message (or the help/version text) already.
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`cdapi: ${reason(error).split('\n')[0]}\n`);
    process.exitCode = 1;
  }
}
