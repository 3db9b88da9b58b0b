/**
 * Load benchmark of the API (`npm run bench -- --help`). For each engine: import the data
 * with the real CLI (timed; with --reimport, once more into the full database), create keys,
 * run the cold mix of distinct URLs; on PostgreSQL, with `--parts peer`, the same requests
 * against Platformatic DB on the same tables; then start `cdapi serve` as its own process,
 * check every fixed scenario answers 200 once, load each with autocannon, then measure two
 * bare node:http baselines serving the same JSON. Prints a table per engine and writes every
 * figure as JSON.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { runBaselines } from './harness/baselines.ts';
import { prepareMix, runCold } from './harness/cold.ts';
import { type PreparedDatabase, prepareDatabase, reimportData } from './harness/database.ts';
import { describeEnvironment } from './harness/environment.ts';
import { type DeleteRun, type FeedRun, runDeletes, runFeed } from './harness/feed.ts';
import { type LoadSettings, runLoad } from './harness/load.ts';
import {
  type BenchOptions,
  type Engine,
  missingDataFile,
  parseOptions,
  USAGE,
} from './harness/options.ts';
import { formatPace, measurePace } from './harness/pace.ts';
import { LARGE_COMPANY_ID, pickParameters, SMALL_COMPANY_ID } from './harness/parameters.ts';
import { ensurePeerInstalled, runPeer } from './harness/peer.ts';
import { buildService, RssSampler, startService } from './harness/processes.ts';
import {
  compareLatencies,
  type EngineRun,
  type FixedRun,
  formatComparison,
  formatEngineRun,
  type ScenarioRun,
  withBaselineRatios,
} from './harness/report.ts';
import { buildScenarios, LEAVES_PAGE_PATH, type Scenario } from './harness/scenarios.ts';
import { createKey, serviceEnv } from './harness/service.ts';
import { formatTargets, judgeTargets } from './harness/targets.ts';

const RSS_INTERVAL_MS = 200;

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** One plain request, as autocannon sends it (no compression); anything but 200 stops the bench. */
async function fetchChecked(url: string, key: string): Promise<string> {
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' },
  });
  const body = await response.text();
  if (response.status !== 200) {
    throw new Error(`GET ${url} answered ${response.status}, not 200: ${body.slice(0, 500)}`);
  }
  return body;
}

async function benchEngine(engine: Engine, dataFile: string, options: BenchOptions) {
  progress(`${engine}: preparing the database`);
  const database = await prepareDatabase(engine, dataFile, options.postgresUrl);
  let reimport: EngineRun['reimport'];
  if (options.reimport) {
    progress(`${engine}: importing the same file again`);
    reimport = await reimportData(dataFile, database);
  }
  const peerAsked = options.parts.includes('peer') && engine === 'postgres';
  if (options.parts.includes('peer') && !peerAsked) {
    progress(`${engine}: no peer part here: Platformatic DB reads the PostgreSQL tables only`);
  }
  const mix =
    options.parts.includes('cold') || peerAsked
      ? await prepareMix(database, options.cold, options.data)
      : undefined;
  const cold =
    mix && options.parts.includes('cold') ? await runCold(database, options.cold, mix) : undefined;
  const peer = mix && peerAsked ? await runPeer(database, options.cold, mix) : undefined;
  const fixed = options.parts.includes('fixed') ? await runFixed(database, options) : undefined;
  let feed: FeedRun | undefined;
  let deletes: DeleteRun | undefined;
  if (options.parts.includes('feed')) {
    progress(`${engine}: reading the large company's change feed`);
    feed = await runFeed(database);
    progress(`${engine}: deleting 1 % of the large company's leaves and expenses, and back`);
    deletes = await runDeletes(dataFile, database);
  }
  return {
    engine,
    database: database.label,
    import: database.import,
    ...(reimport ? { reimport } : {}),
    ...(cold ? { cold } : {}),
    ...(peer ? { peer } : {}),
    ...(fixed ? { fixed } : {}),
    ...(feed ? { feed } : {}),
    ...(deletes ? { deletes } : {}),
  } satisfies EngineRun;
}

/** The fixed-URL scenarios on one service, then the two baselines. */
async function runFixed(database: PreparedDatabase, options: BenchOptions): Promise<FixedRun> {
  const { engine } = database;
  const keys = {
    large: await createKey(database, LARGE_COMPANY_ID, 'bench'),
    small: await createKey(database, SMALL_COMPANY_ID, 'bench'),
  };
  const parameters = await pickParameters(database.env.DATABASE_URL as string);
  const scenarios = buildScenarios(parameters).filter((scenario) =>
    options.scenarios.includes(scenario.name),
  );
  const settings: LoadSettings = {
    durationSeconds: options.durationSeconds,
    connections: options.connections,
  };

  const service = await startService(serviceEnv(database));
  const rss = new RssSampler(service.pid, RSS_INTERVAL_MS);
  const apiPath = new URL(service.baseUrl).pathname;
  const runs: ScenarioRun[] = [];
  let leavesPage: unknown;
  try {
    for (const scenario of scenarios) {
      await fetchChecked(`${service.baseUrl}${scenario.paths[0]}`, keys[scenario.company]);
    }
    for (const scenario of scenarios) {
      progress(`${engine}: ${scenario.name} for ${settings.durationSeconds} s`);
      runs.push(await runScenario(scenario, service.baseUrl, apiPath, keys, settings, rss));
    }
    // Fetched after the runs so it warms nothing that is measured.
    leavesPage = JSON.parse(
      await fetchChecked(`${service.baseUrl}${LEAVES_PAGE_PATH}`, keys.large),
    );
  } finally {
    rss.stop();
    await service.stop();
  }

  progress(`${engine}: baselines`);
  const baselines = await runBaselines(leavesPage, settings);
  const { expenseIds, ...reportedParameters } = parameters;
  return {
    parameters: { ...reportedParameters, expenseIdPoolSize: expenseIds.length },
    servicePeakRssBytes: rss.peakBytes,
    rssSampling: `VmRSS every ${RSS_INTERVAL_MS} ms`,
    scenarios: withBaselineRatios(runs, baselines),
    baselines,
  };
}

async function runScenario(
  scenario: Scenario,
  baseUrl: string,
  apiPath: string,
  keys: Record<Scenario['company'], string>,
  settings: LoadSettings,
  rss: RssSampler,
): Promise<ScenarioRun> {
  rss.takeWindowPeak(); // start this scenario's window
  const result = await runLoad(
    {
      url: `${baseUrl}${scenario.paths[0]}`,
      paths: scenario.paths.map((path) => `${apiPath}${path}`),
      headers: { authorization: `Bearer ${keys[scenario.company]}` },
    },
    settings,
  );
  return {
    name: scenario.name,
    pattern: scenario.pattern,
    examplePath: scenario.paths[0] as string,
    companyId: scenario.company === 'large' ? LARGE_COMPANY_ID : SMALL_COMPANY_ID,
    ...result,
    servicePeakRssBytes: rss.takeWindowPeak(),
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options === null) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const dataFile = resolve(options.data);
  if (!existsSync(dataFile)) {
    throw missingDataFile(options.data);
  }
  const startedAt = new Date().toISOString();
  const environment = describeEnvironment();
  // First, while nothing else of the run loads the machine.
  progress('timing the machine’s pace');
  const pace = measurePace();
  progress('building the service (npm run build)');
  await buildService();
  if (options.parts.includes('peer')) await ensurePeerInstalled();
  const runs: EngineRun[] = [];
  for (const engine of options.engines) runs.push(await benchEngine(engine, dataFile, options));

  const [sqlite, postgres] = runs;
  const comparison =
    runs.length === 2 && sqlite && postgres ? compareLatencies(sqlite, postgres) : undefined;
  const sections = [
    `${environment.cpuModel}, ${environment.cores} cores; ${formatPace(pace)}`,
    ...runs.map((run) => formatEngineRun(run, options)),
  ];
  if (comparison) sections.push(formatComparison(comparison));
  const targets = judgeTargets(runs);
  sections.push(formatTargets(targets, options.engines));
  process.stdout.write(`${sections.join('\n\n')}\n`);

  const results = {
    startedAt,
    environment,
    pace,
    settings: {
      data: options.data,
      dataBytes: statSync(dataFile).size,
      db: options.dbLabel,
      durationSeconds: options.durationSeconds,
      connections: options.connections,
      scenarios: options.scenarios,
      latency: 'ms over every response, from autocannon per-response timings (µs resolution)',
    },
    runs,
    ...(comparison ? { comparison } : {}),
    targets,
  };
  mkdirSync(dirname(resolve(options.out)), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nresults: ${options.out}\n`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
