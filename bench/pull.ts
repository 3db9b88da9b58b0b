/**
 * cdapi-pull on the large bench company (`npm run bench:pull -- --help`): prepares the
 * database as `npm run bench` does (imports the data file once, reuses it afterwards),
 * creates a key of the large company with raised limits, starts the built service in its own
 * process, then times cdapi-pull (the built package, its own process) pulling everything into
 * a fresh SQLite file (uncompressed: the service is on this machine), once more with nothing
 * new, then from scratch again with `--compress`, as a pull from another machine asks. Prints
 * records/s and writes the figures as JSON.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { prepareDatabase } from './harness/database.ts';
import { describeEnvironment } from './harness/environment.ts';
import { onInterrupt, stopOnInterrupt } from './harness/interrupt.ts';
import {
  benchPostgresUrl,
  COMMON_FLAGS,
  fileTimestamp,
  missingDataFile,
  parseFlags,
  positiveInteger,
  UsageError,
} from './harness/options.ts';
import { LARGE_COMPANY_ID } from './harness/parameters.ts';
import { buildService, mebibytes, RssSampler, startService } from './harness/processes.ts';
import { createKey, serviceEnv } from './harness/service.ts';

const USAGE = `usage: npm run bench:pull -- [options]
  --data FILE        the import file (default bench-data/large.ndjson; npm run bench:data)
  --db ENGINE        sqlite (bench-data/<data>.db) or postgres (BENCH_DATABASE_URL); default sqlite
  --page-size N      change-feed entries a request (default 1000, the most)
  --company ID       the company to pull (default ${LARGE_COMPANY_ID}, the large one)
  --out FILE         the JSON figures (default bench-results/pull-<time>.json)`;

const PULL_BIN = resolve('client/dist/pull/cli.js');
const RSS_INTERVAL_MS = 200;

interface PullFigures {
  upserts: number;
  deletes: number;
  seconds: number;
  recordsPerSecond: number;
  peakRssBytes: number | null;
}

function progress(message: string): void {
  process.stderr.write(`bench:pull: ${message}\n`);
}

/** One cdapi-pull run, its --json summary and its peak RSS. */
async function timedPull(args: string[], key: string): Promise<PullFigures> {
  const child = spawn(process.execPath, [PULL_BIN, ...args, '--json'], {
    env: { PATH: process.env.PATH ?? '', CDAPI_KEY: key },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  stopOnInterrupt(child);
  const rss = new RssSampler(child.pid as number, RSS_INTERVAL_MS);
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const [code] = await once(child, 'exit');
  rss.stop();
  if (code !== 0) throw new Error(`cdapi-pull exited with ${code}`);
  const summary = JSON.parse(stdout) as { upserts: number; deletes: number; seconds: number };
  return {
    ...summary,
    recordsPerSecond: Math.round((summary.upserts + summary.deletes) / summary.seconds),
    peakRssBytes: rss.peakBytes,
  };
}

async function main(): Promise<void> {
  const values = parseFlags(
    process.argv.slice(2),
    {
      ...COMMON_FLAGS,
      db: { type: 'string' },
      'page-size': { type: 'string' },
      company: { type: 'string' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const engine = values.db ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres')
    throw new UsageError('--db must be sqlite or postgres', USAGE);
  const dataFile = values.data ?? 'bench-data/large.ndjson';
  if (!existsSync(dataFile)) {
    throw missingDataFile(dataFile);
  }
  const pageSize = values['page-size']
    ? positiveInteger('--page-size', values['page-size'], USAGE)
    : 1000;
  // cdapi-pull's own limit, told before the build and the import rather than by its run.
  if (pageSize > 1000) throw new UsageError('--page-size must be at most 1000', USAGE);
  const companyId = values.company
    ? positiveInteger('--company', values.company, USAGE)
    : LARGE_COMPANY_ID;
  const out = values.out ?? `bench-results/pull-${fileTimestamp(new Date())}.json`;
  const postgresUrl = benchPostgresUrl(process.env, USAGE);

  progress('building the service');
  await buildService();
  progress(`preparing the ${engine} database from ${dataFile}`);
  const database = await prepareDatabase(engine, dataFile, postgresUrl);
  const key = await createKey(database, companyId, 'bench-pull');
  const service = await startService(serviceEnv(database));
  const scratch = mkdtempSync(join(tmpdir(), 'cdapi-bench-pull-'));
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
  const forgetScratch = onInterrupt(removeScratch);
  try {
    const mirror = join(scratch, 'mirror.sqlite');
    const args = ['--base-url', service.baseUrl, '--out', mirror, '--page-size', String(pageSize)];
    progress(
      `full pull of company ${companyId} into ${mirror} (uncompressed answers: the default on this machine)`,
    );
    const full = await timedPull(args, key);
    progress(`${full.upserts} records in ${full.seconds} s: ${full.recordsPerSecond} records/s`);
    const mirrorBytes = statSync(mirror).size;
    progress('incremental pull (nothing new)');
    const incremental = await timedPull(args, key);
    rmSync(mirror);
    progress('full pull again with --compress (as from another machine)');
    const compressed = await timedPull([...args, '--compress'], key);
    progress(
      `${compressed.upserts} records in ${compressed.seconds} s: ${compressed.recordsPerSecond} records/s`,
    );
    const figures = {
      environment: describeEnvironment(),
      engine,
      database: database.label,
      import: database.import,
      companyId,
      pageSize,
      full,
      incremental,
      compressed,
      mirrorBytes,
    };
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
    process.stdout.write(
      `${engine}: full pull ${full.upserts} records in ${full.seconds} s = ${full.recordsPerSecond} records/s ` +
        `(peak RSS ${mebibytes(full.peakRssBytes)}, mirror ${mebibytes(mirrorBytes)}); with --compress ` +
        `${compressed.recordsPerSecond} records/s; incremental ${incremental.seconds} s; ${out}\n`,
    );
  } finally {
    await service.stop();
    removeScratch();
    forgetScratch();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:pull: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
