import { type ParseArgsConfig, parseArgs } from 'node:util';
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
}

export const USAGE = `usage: npm run bench -- [options]
  --data FILE          NDJSON to import (env BENCH_DATA; default bench-data/large.ndjson)
  --db ENGINE          sqlite, postgres or both (env BENCH_DB; default sqlite)
  --duration SECONDS   per scenario (env BENCH_DURATION; default 10)
  --connections N      concurrent connections (env BENCH_CONNECTIONS; default 32)
  --out FILE           JSON results (env BENCH_OUT; default bench-results/<db>-<timestamp>.json)
  --reimport           then import the same file again into the full database, timed
                       (env BENCH_REIMPORT=1): what a nightly re-import of unchanged data costs
  --scenarios a,b      run only these scenarios (env BENCH_SCENARIOS; default all):
                       ${SCENARIO_NAMES.join(', ')}
PostgreSQL: env BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/cdapi_bench).`;

/** A bad command line: the problem, then the usage text of the command it was given to. */
export class UsageError extends Error {
  constructor(problem: string, usage = USAGE) {
    super(`${problem}\n\n${usage}`);
  }
}

/** The PostgreSQL database the harness uses: env BENCH_DATABASE_URL, or the default. */
export function benchPostgresUrl(env: NodeJS.ProcessEnv): string {
  return env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/cdapi_bench';
}

export function positiveInteger(name: string, raw: string, usage = USAGE): number {
  if (!/^[1-9]\d*$/.test(raw)) throw new UsageError(`${name} must be a positive integer`, usage);
  return Number(raw);
}

function parseEngines(raw: string): Engine[] {
  if (raw === 'both') return ['sqlite', 'postgres'];
  if (raw === 'sqlite' || raw === 'postgres') return [raw];
  throw new UsageError('--db must be sqlite, postgres or both');
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
  const dbLabel = values.db ?? env.BENCH_DB ?? 'sqlite';
  return {
    data: values.data ?? env.BENCH_DATA ?? 'bench-data/large.ndjson',
    engines: parseEngines(dbLabel),
    dbLabel,
    postgresUrl: benchPostgresUrl(env),
    durationSeconds: positiveInteger('--duration', values.duration ?? env.BENCH_DURATION ?? '10'),
    connections: positiveInteger(
      '--connections',
      values.connections ?? env.BENCH_CONNECTIONS ?? '32',
    ),
    out:
      values.out ?? env.BENCH_OUT ?? `bench-results/${dbLabel}-${fileTimestamp(new Date())}.json`,
    scenarios: parseScenarios(values.scenarios ?? env.BENCH_SCENARIOS),
    reimport: values.reimport ?? env.BENCH_REIMPORT === '1',
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
} as const satisfies FlagSpecs;

/** Flags only, no positionals; an unknown or malformed flag is a UsageError with `usage`. */
export function parseFlags<T extends FlagSpecs>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}
