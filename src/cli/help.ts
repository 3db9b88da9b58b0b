/**
 * What `--help` adds below commander's own text: examples, and the environment variables a
 * command reads (config.ts validates them; README.md has the full table).
 */

import { SERVICE_ENV, SERVICE_NODE_OPTIONS } from '../heap.ts';

type Variable = readonly [name: string, meaning: string];

/** Every command reads these. */
const COMMON_VARIABLES: readonly Variable[] = [
  ['DATABASE_URL', 'sqlite:PATH or postgres://… (default sqlite:./data/company-data.db)'],
  [
    'RECEIPTS_DIR',
    'receipt store (default: beside the SQLite file; with PostgreSQL, required by serve, import, demo and companies purge)',
  ],
  ['LOG_LEVEL', 'fatal, error, warn, info (default), debug, trace or silent'],
  ['CHANGES_RETENTION_DAYS', 'days GET /changes remembers deletions (default 30)'],
  [
    'DATABASE_STATEMENT_TIMEOUT_MS',
    'longest wait to connect; serve: longest query or pool wait before a 503 (default 10000)',
  ],
];

/** `cdapi serve` reads these too. */
const SERVER_VARIABLES: readonly Variable[] = [
  ['HOST / PORT', 'listen address (default 127.0.0.1 / 8080; --host and --port win)'],
  ['METRICS_PORT', 'Prometheus metrics on http://HOST:METRICS_PORT/metrics (default: off)'],
  [
    'ADMIN_PORT / ADMIN_TOKEN',
    'admin API and panel on http://HOST:ADMIN_PORT/admin (default: off) / its token (required with it)',
  ],
  [
    'ADMIN_TOKEN_PREVIOUS / ADMIN_TOKEN_LABEL',
    'also accepted while rotating (default: none) / who the audit log names (default admin)',
  ],
  ['PUBLIC_BASE_URL', 'absolute base for URLs in bodies and redirects (default: from the request)'],
  [
    'SIGNING_SECRET',
    'HMAC key of signed receipt URLs (generated for SQLite; required with PostgreSQL)',
  ],
  ['SIGNED_URL_TTL_SECONDS', 'validity of a signed receipt URL (default 300)'],
  [
    'TRUST_PROXY / ADMIN_TRUST_PROXY',
    'honour X-Forwarded-* on the public / the admin listener (default false)',
  ],
  ['DATABASE_READ_URL', 'PostgreSQL read replica for API reads (default: none)'],
  [
    'DATABASE_POOL_MAX / DATABASE_READ_POOL_MAX',
    'connections per instance (default 10 / the same)',
  ],
  [
    'REDIS_URL / REDIS_KEY_PREFIX',
    'shared rate limits (default: per instance) / key prefix (cdapi:)',
  ],
  ['RESPONSE_CACHE_MB', 'in-process cache of JSON answers (default 16; 0 turns it off)'],
  [
    'HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS / HTTP_KEEP_ALIVE_TIMEOUT_MS',
    'slow-client limits (default 10000 / 30000 / 72000)',
  ],
  ['SQLITE_READERS', 'threads that run SQLite reads off the event loop (default 2; 0: none)'],
  ['SQLITE_READER_NICE', 'their nice value above the event loop’s, on Linux (default 10; 0-19)'],
  [
    'MAX_CONCURRENT_REQUESTS / MAX_QUEUED_REQUESTS / MAX_QUEUE_WAIT_MS',
    'data requests served at once / waiting / longest wait before a 503 (16 / 256 / 1000)',
  ],
];

function section(title: string, lines: readonly string[]): string {
  return `\n${title}:\n${lines.map((line) => `  ${line}`).join('\n')}\n`;
}

function variables(list: readonly Variable[]): string[] {
  return list.flatMap(([name, meaning]) => [name, `    ${meaning}`]);
}

export const PROGRAM_HELP = [
  section('Examples', [
    'npx cdapi serve --demo                 start on embedded SQLite with a demo company',
    'npx cdapi serve --port 9090 --json     another port; the start-up line as JSON',
    'npx cdapi import export.ndjson         load a company export (docs/import-format.md)',
    'npx cdapi keys create --company 1 --name payroll',
    'DATABASE_URL=postgres://postgres@127.0.0.1/company_data npx cdapi migrate',
  ]),
  section('Environment (validated when a command starts)', variables(COMMON_VARIABLES)),
  '\n`cdapi serve --help` lists the variables of the service; every command takes --help and\n--json, and on failure prints one line "cdapi: reason" on stderr and exits non-zero.\n',
].join('');

export const SERVE_HELP = [
  section('Examples', [
    'npx cdapi serve --demo',
    'npx cdapi serve --host 0.0.0.0 --port 8081',
    'METRICS_PORT=9464 npx cdapi serve --json',
  ]),
  section('Environment', variables([...COMMON_VARIABLES, ...SERVER_VARIABLES])),
  section('Memory', [
    `Runs with node ${SERVICE_NODE_OPTIONS.join(' ')} and ${Object.entries(SERVICE_ENV)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')} unless given other values:`,
    'started without them, it restarts itself at once with them added (the same PID).',
  ]),
].join('');

export const IMPORT_HELP = [
  section('Examples', [
    'npx cdapi import export.ndjson',
    'npx cdapi import export.ndjson --json 2>progress.log',
    'RECEIPTS_DIR=/srv/cdapi/receipts DATABASE_URL=postgres://… npx cdapi import export.ndjson',
  ]),
  section('Progress (on stderr)', [
    'On a terminal: one line redrawn in place (records, percent of the file, rate, ETA).',
    'Otherwise: a plain line every 10 s (--progress-every), JSON lines with --json.',
    'After the last record: each step of the commit as it starts, then the whole time.',
  ]),
  section('Environment', variables(COMMON_VARIABLES)),
].join('');

/** Examples, and the variables every command reads (the commands below read no others). */
function commandHelp(examples: readonly string[]): string {
  return [section('Examples', examples), section('Environment', variables(COMMON_VARIABLES))].join(
    '',
  );
}

export const MIGRATE_HELP = commandHelp([
  'npx cdapi migrate',
  'DATABASE_URL=postgres://postgres@127.0.0.1/company_data npx cdapi migrate --json',
]);

export const DEMO_HELP = commandHelp(['npx cdapi demo', 'npx cdapi demo --employees 500 --json']);

/** The help of a command's group (all the examples) and of each of its commands (its own). */
function groupHelp<Name extends string>(
  examples: Record<Name, readonly string[]>,
): { group: string; command: Record<Name, string> } {
  const entries = Object.entries<readonly string[]>(examples);
  return {
    group: commandHelp(entries.flatMap(([, lines]) => lines)),
    command: Object.fromEntries(
      entries.map(([name, lines]) => [name, commandHelp(lines)]),
    ) as Record<Name, string>,
  };
}

export const COMPANIES_HELP = groupHelp({
  list: ['npx cdapi companies list', 'npx cdapi companies list --json'],
  activate: ['npx cdapi companies activate 7'],
  deactivate: ['npx cdapi companies deactivate 7'],
  purge: ['npx cdapi companies purge 7 --confirm 7'],
});

export const KEYS_HELP = groupHelp({
  create: [
    'npx cdapi keys create --company 1 --name payroll',
    'npx cdapi keys create --company 1 --name travel --scopes expenses.read --per-minute 60 --json',
  ],
  list: ['npx cdapi keys list --company 1'],
  revoke: ['npx cdapi keys revoke 12'],
});
