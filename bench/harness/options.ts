import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { ColdSettings } from './cold.ts';
import { MIX_CLASSES } from './cold-mix.ts';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.ts';

export type Engine = 'sqlite' | 'postgres';

export interface BenchOptions {
  /** NDJSON file to import (the output of `npm run bench:data`). */
  readonly data: string;
  /** Engines to run, in order. */
  readonly engines: readonly Engine[];
  /** `sqlite`, `postgres` or `both`: names the default results file. */
  readonly dbLabel: string;
  readonly postgresUrl: string;
  readonly durationSeconds: number;
  readonly connections: number;
  readonly out: string;
  readonly scenarios: readonly ScenarioName[];
  /** After preparing the database, import the same file into it again, timed. */
  readonly reimport: boolean;
  /** What to run after preparing the database: the cold mix, the fixed-URL scenarios. */
  readonly parts: readonly BenchPart[];
  readonly cold: ColdSettings;
}

export const BENCH_PARTS = ['cold', 'peer', 'fixed', 'feed'] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

export const USAGE = `usage: npm run bench -- [options]
  --data FILE          NDJSON to import (env BENCH_DATA; default bench-data/large.ndjson)
  --db ENGINE          sqlite, postgres or both (env BENCH_DB; default sqlite)
  --duration SECONDS   per scenario (env BENCH_DURATION; default 10)
  --connections N      concurrent connections (env BENCH_CONNECTIONS; default 32)
  --out FILE           JSON results (env BENCH_OUT; default bench-results/<db>-<timestamp>.json)
  --reimport           then import the same file again into the full database, timed
                       (env BENCH_REIMPORT=1): what a nightly re-import of unchanged data costs
  --parts a,b          what to run (env BENCH_PARTS; default cold,fixed): cold = the cold mix of
                       distinct URLs, per class, then first requests after a restart (the
                       headline); peer = PostgreSQL only: the mix's requests, class by class, on
                       the service (cache off) and on Platformatic DB over the same tables
                       (bench/peer, installed on first use); fixed = the fixed-URL scenarios,
                       which the response cache answers; feed = read the large company's whole
                       change feed at limit=1000 (records/s, p99 per request), then import a
                       file deleting 1 % of its leaves and expenses and one bringing them back
  --mix-requests N     requests in the cold mix (default 40000); a mix begins with every
                       smaller one drawn with the same seed
  --mix-duration S     seconds per cold-mix phase, and per class and side in the peer part
                       (default 30)
  --mix-connections L  comma list of connection counts, one phase each (default 8,32); the
                       peer part runs at each too
  --mix-cache L        comma list of on/off: response cache per phase (default on,off)
  --mix-seed N         seed of the cold mix (default 20261124)
  --mix-classes L      comma list of classes: send only the mix's requests of these (the same
                       URLs as in the whole mix, for A/B runs of a few classes; default all):
                       ${MIX_CLASSES.join(', ')}
  --first-requests N   heavy requests sent one at a time after a restart (default 30)
  --scenarios a,b      run only these fixed scenarios (env BENCH_SCENARIOS; default all):
                       ${SCENARIO_NAMES.join(', ')}
PostgreSQL: env BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/cdapi_bench).
Profiling: env BENCH_CPU_PROFILE_DIR=DIR writes a CPU profile of the service per phase there.`;

/** A bad command line: the problem, then the usage text of the command it was given to. */
export class UsageError extends Error {
  constructor(problem: string, usage = USAGE) {
    super(`${problem}\n\n${usage}`);
  }
}

/** A data file (`--data`) that is not there, as every benchmark command tells it. */
export const missingDataFile = (file: string): Error =>
  new Error(`${file} does not exist (npm run bench:data writes it)`);

/** The PostgreSQL database the harness uses: env BENCH_DATABASE_URL, or the default. */
export function benchPostgresUrl(env: NodeJS.ProcessEnv, usage = USAGE): string {
  const url = env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/cdapi_bench';
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // Told below.
  }
  if (parsed === null || !/^postgres(ql)?:$/.test(parsed.protocol)) {
    throw new UsageError(
      'BENCH_DATABASE_URL must be a postgres:// URL: postgres://USER@HOST:PORT/DATABASE',
      usage,
    );
  }
  if (decodeURIComponent(parsed.pathname.slice(1)) === '') {
    throw new UsageError(
      'BENCH_DATABASE_URL must name its database: postgres://USER@HOST:PORT/DATABASE',
      usage,
    );
  }
  return url;
}

export function positiveInteger(name: string, raw: string, usage = USAGE): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new UsageError(`${name} must be a positive integer`, usage);
  return Number(raw);
}

function parseEngines(raw: string, name: string): Engine[] {
  if (raw === 'both') return ['sqlite', 'postgres'];
  if (raw === 'sqlite' || raw === 'postgres') return [raw];
  throw new UsageError(`${name} must be sqlite, postgres or both`);
}

function parseScenarios(raw: string | undefined): ScenarioName[] {
  if (raw === undefined || raw === '') return [...SCENARIO_NAMES];
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(SCENARIO_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`unknown scenario(s): ${unknown.join(', ')}`);
  return names as ScenarioName[];
}

/** `2026-05-01T12-30-00Z`: an ISO timestamp without the characters file names dislike. */
export function fileTimestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

/**
 * Flags win over the BENCH_* environment variables, which win over the defaults.
 * Returns null when --help was asked for (the caller prints USAGE).
 */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions | null {
  const values = parseFlags(argv, BENCH_FLAGS, USAGE);
  if (values.help) return null;
  // A bad value is told by the name it was given under: the flag, else the variable.
  const given = (flag: keyof typeof values, variable: string): string =>
    values[flag] === undefined && env[variable] !== undefined ? variable : `--${flag}`;
  const dbLabel = values.db ?? env.BENCH_DB ?? 'sqlite';
  const engines = parseEngines(dbLabel, given('db', 'BENCH_DB'));
  const parts = parseList(
    values.parts ?? env.BENCH_PARTS ?? 'cold,fixed',
    BENCH_PARTS,
    given('parts', 'BENCH_PARTS'),
  );
  if (parts.includes('peer') && !engines.includes('postgres')) {
    throw new UsageError(
      '--parts peer needs --db postgres (or both): the peer, Platformatic DB, reads the PostgreSQL tables',
    );
  }
  return {
    data: values.data ?? env.BENCH_DATA ?? 'bench-data/large.ndjson',
    engines,
    dbLabel,
    postgresUrl: benchPostgresUrl(env),
    durationSeconds: positiveInteger(
      given('duration', 'BENCH_DURATION'),
      values.duration ?? env.BENCH_DURATION ?? '10',
    ),
    connections: positiveInteger(
      given('connections', 'BENCH_CONNECTIONS'),
      values.connections ?? env.BENCH_CONNECTIONS ?? '32',
    ),
    out:
      values.out ?? env.BENCH_OUT ?? `bench-results/${dbLabel}-${fileTimestamp(new Date())}.json`,
    scenarios: parseScenarios(values.scenarios ?? env.BENCH_SCENARIOS),
    reimport: values.reimport ?? env.BENCH_REIMPORT === '1',
    parts,
    cold: {
      requests: positiveInteger('--mix-requests', values['mix-requests'] ?? '40000'),
      seed: positiveInteger('--mix-seed', values['mix-seed'] ?? '20261124'),
      classes: parseList(
        values['mix-classes'] ?? MIX_CLASSES.join(','),
        MIX_CLASSES,
        '--mix-classes',
      ),
      durationSeconds: positiveInteger('--mix-duration', values['mix-duration'] ?? '30'),
      connections: (values['mix-connections'] ?? '8,32')
        .split(',')
        .map((count) => positiveInteger('--mix-connections', count.trim())),
      cache: parseList(values['mix-cache'] ?? 'on,off', ['on', 'off'] as const, '--mix-cache'),
      firstRequests: positiveInteger('--first-requests', values['first-requests'] ?? '30'),
      timeoutMs: 30_000,
    },
  };
}

/** The flags a command takes, as `parseArgs` wants them. */
export type FlagSpecs = NonNullable<ParseArgsConfig['options']>;

/** The flags `npm run bench` and `npm run soak` share. */
export const COMMON_FLAGS = {
  data: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagSpecs;

const BENCH_FLAGS = {
  ...COMMON_FLAGS,
  db: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string' },
  scenarios: { type: 'string' },
  reimport: { type: 'boolean' },
  parts: { type: 'string' },
  'mix-requests': { type: 'string' },
  'mix-duration': { type: 'string' },
  'mix-connections': { type: 'string' },
  'mix-cache': { type: 'string' },
  'mix-seed': { type: 'string' },
  'mix-classes': { type: 'string' },
  'first-requests': { type: 'string' },
} as const satisfies FlagSpecs;

/** A comma list of known values, in the order given. */
function parseList<T extends string>(raw: string, known: readonly T[], flag: string): T[] {
  const values = raw.split(',').map((value) => value.trim());
  const unknown = values.filter((value) => !(known as readonly string[]).includes(value));
  if (unknown.length > 0 || values.length === 0) {
    throw new UsageError(`${flag} takes a comma list of ${known.join(', ')}`);
  }
  return values as T[];
}

/** Flags only, no positionals; an unknown or malformed flag is a UsageError with `usage`. */
export function parseFlags<T extends FlagSpecs>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}
