import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config-error.ts';
import { MigrationError } from '../db/migration-error.ts';
import { SchemaOutdatedError } from '../db/schema-outdated-error.ts';
import { isConnectionRefused, POSTGRES_DEADLOCK } from '../db/unavailable.ts';
import { limitHeapGrowth } from '../heap.ts';
import { ImportError, ImportInterrupted } from '../import/import-error.ts';
import { ServiceError } from '../services/errors.ts';
import { VERSION } from '../version.ts';
import { registerCompanyCommands } from './companies.command.ts';
import { registerDemoCommand } from './demo.command.ts';
import { PROGRAM_HELP } from './help.ts';
import { registerImportCommand } from './import.command.ts';
import { registerKeyCommands } from './keys.command.ts';
import { registerMigrateCommand } from './migrate.command.ts';
import { registerServeCommand } from './serve.command.ts';

/** With --json anywhere before `--`, failures are machine-readable too. */
const args = process.argv.slice(2);
const jsonOutput = args
  .slice(0, args.includes('--') ? args.indexOf('--') : undefined)
  .includes('--json');

/**
 * Characters a reason may quote from what it was given (an option's value, a path) that must
 * not reach a terminal as they are: control characters (a carriage return, an escape sequence's
 * start, C1's too), the line and paragraph separators, and the bidirectional overrides. Set
 * before the version check below, which prints through `printFailure`.
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** `\t`, `\r`, `\u001b`: a character as a JavaScript string literal writes it. */
const escaped = (c: string): string => {
  const json = JSON.stringify(c).slice(1, -1);
  return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
};

/** The oldest Node.js the CLI runs on; better-sqlite3's binary crashes on Node 20. */
const MIN_NODE = [22, 12] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
  printFailure(
    `Node.js ${MIN_NODE.join('.')} or later is required (this is ${process.version}); npx cdapi runs on the project's own Node`,
  );
  process.exit(1);
}

limitHeapGrowth();

// Output piped to a reader that stopped early (`cdapi companies list | head -1`): what is left
// to print is dropped, and the command runs to its end and exits as it would have (an import
// still commits), instead of dying of an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

/**
 * Every failure ends as one line on stderr and a non-zero exit code: `cdapi: reason`, or with
 * --json `{"error": reason, …details}` (an import error names its line and field there). Its
 * line breaks join its parts; any other unprintable character is written escaped.
 */
function printFailure(message: string, details: Record<string, unknown> = {}): void {
  const line = message
    .split('\n')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ')
    .replace(UNPRINTABLE, escaped);
  process.stderr.write(
    jsonOutput ? `${JSON.stringify({ error: line, ...details })}\n` : `cdapi: ${line}\n`,
  );
}

let helpForFailure = '';

const program = new Command('cdapi')
  .description('Company Data API: the read-only HR data service and its administration.')
  .version(VERSION, '-V, --version', 'print the version')
  .showSuggestionAfterError()
  // Commander's own usage errors (`error: …`) take the same one-line form as every other; a
  // line break in a value they quote shows as `\n` (`'a\nb'`), not as the space that joins
  // the parts of a reason (a value holding an apostrophe may still show it so).
  .configureOutput({
    outputError: (message) =>
      printFailure(
        message
          .replace(/^error: /, '')
          .replace(/'[^']*'/g, (quoted) => quoted.replace(/[\n\r]/g, escaped)),
      ),
    // Only help shown for a failure comes here (`cdapi keys` without its command): kept, and
    // replaced by one line below, as every other failure is. It may come in parts (the text
    // added after commander's own, with examples).
    writeErr: (text) => {
      helpForFailure += text;
    },
  })
  .addHelpText('after', PROGRAM_HELP)
  .exitOverride();

// The commands register their options here and load their implementation (the server, the
// importer, the database modules) when they run: `cdapi --help`, a mistyped option or `cdapi
// keys list` start without the rest (0.1 s of CPU for `--version` against 1.0 s loading it all).
registerServeCommand(program);
registerMigrateCommand(program);
registerImportCommand(program);
registerDemoCommand(program);
registerCompanyCommands(program);
registerKeyCommands(program);

function reason(error: unknown): string {
  if (error instanceof ConfigError) return `configuration: ${error.message}`;
  if (
    error instanceof ImportError ||
    error instanceof ServiceError ||
    error instanceof SchemaOutdatedError
  ) {
    return error.message;
  }
  const code = (error as NodeJS.ErrnoException)?.code;
  if (isConnectionRefused(error)) {
    const message = (error as Error).message;
    // The replica's own refusal already names its variable (server.ts).
    return refusedVariable(error) === 'DATABASE_READ_URL'
      ? message
      : `cannot connect to the database (DATABASE_URL): ${message}`;
  }
  const message = error instanceof Error ? error.message : '';
  if (
    /connection timeout|timeout exceeded when trying to connect/i.test(message) &&
    !message.includes('DATABASE_STATEMENT_TIMEOUT_MS')
  ) {
    return `cannot connect to the database: it did not answer within DATABASE_STATEMENT_TIMEOUT_MS (${message})`;
  }
  if (/statement timeout|query read timeout/i.test(message)) {
    return `a statement of this command did not finish within DATABASE_STATEMENT_TIMEOUT_MS (${message}): the database stopped answering, or another command held the rows it needed; run it again`;
  }
  if (code === 'SQLITE_BUSY' && /database is locked/.test((error as Error).message)) {
    const migration =
      error instanceof MigrationError && error.migration !== null
        ? `migration ${error.migration} failed: `
        : '';
    return `${migration}another import or command is writing to this SQLite database, which takes one writer at a time: run this command again when it has finished`;
  }
  if (code === POSTGRES_DEADLOCK) {
    return `${(error as Error).message}: another import or command wrote some of the same rows at the same time, and PostgreSQL undid this one's transaction (nothing of it was written): run it again`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Which database refused the connection: the read replica's refusal starts with its variable. */
const refusedVariable = (error: unknown): string =>
  (error as Error).message.startsWith('DATABASE_READ_URL: ') ? 'DATABASE_READ_URL' : 'DATABASE_URL';

function details(error: unknown): Record<string, unknown> {
  if (error instanceof ImportError) return { line: error.line, field: error.field };
  if (error instanceof ConfigError) return { variable: error.variable };
  if (isConnectionRefused(error)) return { variable: refusedVariable(error) };
  return {};
}

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its message (through printFailure) or the help or version text;
    // or kept the help it shows for a command group called without its command.
    if (error.code === 'commander.help' && error.exitCode !== 0) {
      const command = /^Usage: (.+?) \[options\]/.exec(helpForFailure)?.[1] ?? 'cdapi';
      const group = command.replace(/^cdapi ?/, '');
      printFailure(
        `${group ? `${group} needs` : 'give'} a command: run ${command} --help to list them`,
      );
    }
    process.exitCode = error.exitCode;
  } else {
    // The first line only: a database error may carry a query or a stack below it.
    printFailure(reason(error).split('\n')[0] ?? '', details(error));
    process.exitCode = error instanceof ImportInterrupted ? error.exitCode : 1;
  }
}
