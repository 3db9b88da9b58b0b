/**
 * Soak test of the API (`npm run soak -- --help`): the built service in its own process, on a
 * prepared database, under a seeded mix of integrators' calls at a fixed rate for N minutes.
 * Prints errors, p99 and the service's RSS per interval, then a summary, writes the figures as
 * JSON, and exits 1 when a call failed or RSS grew by 10 % or more after the warm-up.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/demo/random.ts';
import { type PreparedDatabase, prepareDatabase } from './harness/database.ts';
import { describeEnvironment } from './harness/environment.ts';
import { missingDataFile } from './harness/options.ts';
import { LARGE_COMPANY_ID, pickParameters } from './harness/parameters.ts';
import {
  buildService,
  RssSampler,
  runCli,
  type Service,
  startService,
} from './harness/processes.ts';
import { buildScenarios } from './harness/scenarios.ts';
import { createKey, serviceEnv } from './harness/service.ts';
import { type CompanyData, hasReceipts, readCatalog } from './soak/catalog.ts';
import { runOpenLoop, SoakClient } from './soak/driver.ts';
import {
  type IntervalFigures,
  IntervalRecorder,
  intervalCount,
  rssDrift,
} from './soak/intervals.ts';
import { CALL_KINDS, createMix, kindsFor, type MixCompany, makeCall } from './soak/mix.ts';
import {
  DEFAULT_DATA,
  MAX_DRIFT_PERCENT,
  parseSoakOptions,
  type SoakOptions,
  USAGE,
} from './soak/options.ts';
import {
  formatInterval,
  formatSummary,
  intervalHeader,
  judge,
  KindRecorder,
  type Summary,
} from './soak/report.ts';

const RSS_INTERVAL_MS = 500;
const DATA_SCRIPT = fileURLToPath(new URL('./data.ts', import.meta.url));
/** Employees of the company added for receipts when the data has none. */
const RECEIPT_COMPANY_EMPLOYEES = '20';

function progress(message: string): void {
  process.stderr.write(`soak: ${message}\n`);
}

/** The default data file is the small bench set: generated here (a few seconds) when missing. */
function ensureData(options: SoakOptions): string {
  const file = resolve(options.data);
  if (existsSync(file)) return file;
  if (!options.defaultData) {
    throw missingDataFile(options.data);
  }
  progress(`generating ${DEFAULT_DATA} (npm run bench:data -- --size small)`);
  const args = ['--import', 'tsx', DATA_SCRIPT, '--size', 'small', '--out', file];
  execFileSync(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  return file;
}

/**
 * The bench data has no receipt images; `cdapi demo` adds a company that has a few, once
 * (later runs find it). Its printed key is not used: the soak makes keys of its own.
 */
async function ensureReceipts(database: PreparedDatabase): Promise<void> {
  if (await hasReceipts(database.env.DATABASE_URL as string)) return;
  progress('the data has no receipts: adding a demo company with some (cdapi demo)');
  const output = await runCli(
    ['demo', '--employees', RECEIPT_COMPANY_EMPLOYEES, '--json'],
    database.env,
  );
  progress(`company ${(JSON.parse(output) as { company_id: number }).company_id} added`);
}

async function mixCompanies(database: PreparedDatabase, options: SoakOptions) {
  const url = database.env.DATABASE_URL as string;
  const catalog = await readCatalog(url, options.smallCompanies, options.seed);
  // The bench's own fixed URLs of the large company: what a dashboard asks again and again.
  const benchPaths = buildScenarios(await pickParameters(url))
    .filter((scenario) => scenario.company === 'large')
    .map((scenario) => scenario.paths);
  return catalog.map(
    (data: CompanyData): MixCompany => ({
      data,
      benchPaths: data.id === LARGE_COMPANY_ID ? benchPaths : [],
    }),
  );
}

async function createKeys(database: PreparedDatabase, companies: MixCompany[]) {
  const keys = new Map<number, string>();
  for (const { data } of companies) keys.set(data.id, await createKey(database, data.id, 'soak'));
  return keys;
}

/** Every kind of call once per company before the clock starts: a broken mix stops here. */
async function checkEveryKind(client: SoakClient, companies: MixCompany[], seed: number) {
  const rng = mulberry32(seed + 1);
  for (const company of companies) {
    for (const kind of CALL_KINDS.filter((k) => k in kindsFor(company))) {
      const call = makeCall(rng, kind, company, false);
      const outcome = await client.send(call);
      if (outcome.failure !== null) {
        throw new Error(`company ${call.companyId} GET ${call.path}: ${outcome.failure}`);
      }
    }
  }
}

/** Cuts the run into intervals as it goes: a line for each as it ends, the last once drained. */
function printIntervals(recorder: IntervalRecorder, options: SoakOptions) {
  const intervals: IntervalFigures[] = [];
  const count = intervalCount(options);
  const printNext = () => {
    const figures = recorder.figures(intervals.length);
    intervals.push(figures);
    process.stdout.write(`${formatInterval(figures)}\n`);
  };
  const timer = setInterval(() => {
    if (intervals.length < count - 1) printNext();
  }, options.intervalSeconds * 1000);
  return {
    intervals,
    finish() {
      clearInterval(timer);
      while (intervals.length < count) printNext();
    },
  };
}

/** The load itself, from the first call to the last answer. */
async function soak(
  service: Service,
  client: SoakClient,
  companies: MixCompany[],
  options: SoakOptions,
) {
  const recorder = new IntervalRecorder(options);
  const kinds = new KindRecorder();
  process.stdout.write(`${intervalHeader()}\n`);
  recorder.begin();
  const rss = new RssSampler(service.pid, RSS_INTERVAL_MS, (bytes) => recorder.rss(bytes));
  const printer = printIntervals(recorder, options);
  try {
    await runOpenLoop(
      { ratePerSecond: options.rate, durationSeconds: options.durationSeconds },
      createMix(companies, LARGE_COMPANY_ID, options.seed),
      async (call) => {
        const outcome = await client.send(call);
        recorder.answer(outcome.latencyMs, outcome.failure !== null);
        kinds.record(call, outcome.latencyMs, outcome.failure, recorder.elapsedSeconds());
      },
      (lagMs) => recorder.sendLag(lagMs),
    );
  } finally {
    rss.stop();
    printer.finish();
  }
  const { intervals } = printer;
  const drift = rssDrift(intervals, recorder.samples);
  const errors = intervals.reduce((sum, interval) => sum + interval.errors, 0);
  return {
    summary: {
      intervals,
      kinds: kinds.figures(),
      failures: kinds.failures,
      slowest: kinds.slowest,
      drift,
      maxDriftPercent: MAX_DRIFT_PERCENT,
      peakRssBytes: rss.peakBytes,
      verdict: judge(errors, drift, MAX_DRIFT_PERCENT),
    } satisfies Summary,
    failureExamples: kinds.examples,
  };
}

async function main(): Promise<number> {
  const options = parseSoakOptions(process.argv.slice(2), process.env);
  if (options === null) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const dataFile = ensureData(options);
  const startedAt = new Date().toISOString();
  const environment = describeEnvironment();
  progress('building the service (npm run build)');
  await buildService();
  progress(`${options.engine}: preparing the database`);
  const database = await prepareDatabase(options.engine, dataFile, options.postgresUrl);
  await ensureReceipts(database);
  progress('reading the companies of the mix and creating their keys');
  const companies = await mixCompanies(database, options);
  const keys = await createKeys(database, companies);

  const service = await startService(serviceEnv(database));
  const client = new SoakClient(service.baseUrl, keys);
  let result: Awaited<ReturnType<typeof soak>>;
  try {
    await checkEveryKind(client, companies, options.seed);
    progress(
      `${options.durationSeconds / 60} min at ${options.rate} calls/s on ${database.label}, ` +
        `${companies.length} companies, a line every ${options.intervalSeconds} s`,
    );
    result = await soak(service, client, companies, options);
  } finally {
    client.close();
    await service.stop();
  }
  const { summary, failureExamples } = result;
  process.stdout.write(`\n${formatSummary(summary)}\n`);

  const results = {
    startedAt,
    environment,
    settings: {
      command: `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim(),
      data: options.data,
      dataBytes: statSync(dataFile).size,
      engine: options.engine,
      database: database.label,
      import: database.import,
      durationSeconds: options.durationSeconds,
      ratePerSecond: options.rate,
      intervalSeconds: options.intervalSeconds,
      warmupSeconds: options.warmupSeconds,
      seed: options.seed,
      companies: companies.map((company) => company.data.id),
      rssSampling: `VmRSS every ${RSS_INTERVAL_MS} ms`,
      latency: 'ms from handing the request to the HTTP agent to the last byte of the answer',
      drift:
        'median RSS of the last interval against the median RSS of the first interval after ' +
        'warm-up; fitted: least-squares line through every sample after warm-up',
    },
    ...summary,
    failures: Object.fromEntries(summary.failures),
    failureExamples,
  };
  mkdirSync(dirname(resolve(options.out)), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nresults: ${options.out}\n`);
  return summary.verdict.passed ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
}
