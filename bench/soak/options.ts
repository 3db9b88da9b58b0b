import {
  benchPostgresUrl,
  COMMON_FLAGS,
  type Engine,
  type FlagSpecs,
  fileTimestamp,
  parseFlags,
  positiveInteger,
  UsageError,
} from '../harness/options.ts';
import { intervalCount, warmupIntervalCount } from './intervals.ts';

export interface SoakOptions {
  /** NDJSON file to import (the output of `npm run bench:data`). */
  readonly data: string;
  /** True when `data` is the default small file, which the soak generates when missing. */
  readonly defaultData: boolean;
  readonly engine: Engine;
  readonly postgresUrl: string;
  readonly durationSeconds: number;
  /** Calls sent per second, on a fixed schedule whatever the latency. */
  readonly rate: number;
  readonly intervalSeconds: number;
  /** Intervals that start before this are warm-up: they count for errors, not for drift. */
  readonly warmupSeconds: number;
  /** Small companies in the mix beside the large one. */
  readonly smallCompanies: number;
  readonly seed: number;
  readonly out: string;
}

export const DEFAULT_DATA = 'bench-data/small.ndjson';
/** The limit of the check: RSS may grow by less than this after warm-up. */
export const MAX_DRIFT_PERCENT = 10;
const DEFAULT_INTERVAL_SECONDS = 30;
const DEFAULT_WARMUP_SECONDS = 60;
/** Shorter runs get intervals of a tenth and a warm-up of a fifth of their length. */
const SHORT_RUN_SECONDS = 300;

export const USAGE = `usage: npm run soak -- [options]
  --minutes N          how long to load (may be a fraction; default 10)
  --rate R             calls per second, held whatever the latency (default 50)
  --interval SECONDS   one report line per interval (default 30; a tenth of runs under 5 minutes)
  --warmup-minutes N   left out of the drift figure (default 1, a fifth of runs under 5 minutes)
  --engine ENGINE      sqlite or postgres (default sqlite)
  --data FILE          NDJSON to import (default ${DEFAULT_DATA}, generated when missing)
  --companies N        small companies in the mix beside the large one (default 8)
  --seed N             seed of the request mix (default 1)
  --out FILE           JSON results (default bench-results/soak-<engine>-<timestamp>.json)
PostgreSQL: env BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/cdapi_bench).
Exits 1 when a call failed or RSS grew by ${MAX_DRIFT_PERCENT} % or more after warm-up, 2 when it
could not run.`;

/** A decimal number of minutes or the like; zero only where `allowZero`. */
function decimal(name: string, raw: string, allowZero = false): number {
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || (value === 0 && !allowZero)) {
    throw new UsageError(
      `${name} must be a ${allowZero ? 'non-negative' : 'positive'} number`,
      USAGE,
    );
  }
  return value;
}

const isShortRun = (durationSeconds: number) => durationSeconds < SHORT_RUN_SECONDS;

function chooseInterval(raw: string | undefined, durationSeconds: number): number {
  if (raw !== undefined) return positiveInteger('--interval', raw, USAGE);
  if (!isShortRun(durationSeconds)) return DEFAULT_INTERVAL_SECONDS;
  return Math.max(1, Math.round(durationSeconds / 10));
}

function chooseWarmup(raw: string | undefined, durationSeconds: number): number {
  if (raw !== undefined) return 60 * decimal('--warmup-minutes', raw, true);
  return isShortRun(durationSeconds) ? durationSeconds / 5 : DEFAULT_WARMUP_SECONDS;
}

function parseEngine(raw: string): Engine {
  if (raw === 'sqlite' || raw === 'postgres') return raw;
  throw new UsageError('--engine must be sqlite or postgres', USAGE);
}

const SOAK_FLAGS = {
  ...COMMON_FLAGS,
  minutes: { type: 'string' },
  rate: { type: 'string' },
  interval: { type: 'string' },
  'warmup-minutes': { type: 'string' },
  engine: { type: 'string' },
  companies: { type: 'string' },
  seed: { type: 'string' },
} as const satisfies FlagSpecs;

/** Returns null when --help was asked for (the caller prints USAGE). */
export function parseSoakOptions(argv: string[], env: NodeJS.ProcessEnv): SoakOptions | null {
  const values = parseFlags(argv, SOAK_FLAGS, USAGE);
  if (values.help) return null;
  const engine = parseEngine(values.engine ?? 'sqlite');
  const durationSeconds = Math.round(60 * decimal('--minutes', values.minutes ?? '10'));
  const intervalSeconds = chooseInterval(values.interval, durationSeconds);
  const warmupSeconds = chooseWarmup(values['warmup-minutes'], durationSeconds);
  const plan = { durationSeconds, intervalSeconds, warmupSeconds };
  if (intervalCount(plan) - warmupIntervalCount(plan) < 2) {
    throw new UsageError(
      'the run must leave at least two intervals after the warm-up: make --minutes longer, ' +
        'or --interval or --warmup-minutes shorter',
      USAGE,
    );
  }
  return {
    data: values.data ?? DEFAULT_DATA,
    defaultData: values.data === undefined,
    engine,
    postgresUrl: benchPostgresUrl(env),
    durationSeconds,
    rate: positiveInteger('--rate', values.rate ?? '50', USAGE),
    intervalSeconds,
    warmupSeconds,
    smallCompanies: positiveInteger('--companies', values.companies ?? '8', USAGE),
    seed: positiveInteger('--seed', values.seed ?? '1', USAGE),
    out: values.out ?? `bench-results/soak-${engine}-${fileTimestamp(new Date())}.json`,
  };
}
