import { table } from '../../src/cli/context.ts';
import type { BaselineResults } from './baselines.ts';
import { type ColdRun, formatCold } from './cold.ts';
import type { ImportFigures } from './database.ts';
import type { DeleteRun, FeedRun } from './feed.ts';
import { formatImportSteps } from './import-steps.ts';
import type { LatencySummary, LoadResult } from './load.ts';
import type { Engine } from './options.ts';
import type { ScenarioParameters } from './parameters.ts';
import type { PeerRun } from './peer.ts';
import { formatPeer } from './peer-report.ts';
import { mebibytes } from './processes.ts';

export interface ScenarioRun extends LoadResult {
  name: string;
  pattern: string;
  /** The first (for most scenarios the only) path sent, under the API base. */
  examplePath: string;
  companyId: number;
  servicePeakRssBytes: number | null;
  /** req/s as a share of baseline (b), JSON.stringify per request. */
  percentOfStringifyBaseline?: number;
  /** req/s as a share of baseline (a), the prebuilt body: only for `repeated`. */
  percentOfPrebuiltBaseline?: number;
}

export interface EngineRun {
  engine: Engine;
  /** The SQLite file or the PostgreSQL URL (no password). */
  database: string;
  import: ImportFigures;
  /** With --parts feed: the whole change feed of the large company, and 1 % deleted. */
  feed?: FeedRun;
  deletes?: DeleteRun;
  /** With --reimport: the same file imported again into the full database. */
  reimport?: ImportFigures;
  /** The cold mix of distinct URLs, per class, and the first requests after a restart. */
  cold?: ColdRun;
  /** PostgreSQL only: the mix's requests on the service and on Platformatic DB, class by class. */
  peer?: PeerRun;
  /** The fixed-URL scenarios, which after their first request the response cache answers. */
  fixed?: FixedRun;
}

export interface FixedRun {
  parameters: Omit<ScenarioParameters, 'expenseIds'> & { expenseIdPoolSize: number };
  servicePeakRssBytes: number | null;
  rssSampling: string;
  scenarios: ScenarioRun[];
  baselines: BaselineResults;
}

export interface LatencyComparison {
  scenario: string;
  sqliteP50Ms: number;
  postgresP50Ms: number;
  p50Ratio: number;
  sqliteP99Ms: number;
  postgresP99Ms: number;
  p99Ratio: number;
}

export const ENGINE_NAMES: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

const perSecond = (value: number) => Math.round(value).toString();
const milliseconds = (value: number) => value.toFixed(2);
const percent = (value: number | undefined) =>
  value === undefined ? null : `${Math.round(value)}%`;

/** Adds each scenario's throughput relative to the baselines measured in the same pass. */
export function withBaselineRatios(
  scenarios: ScenarioRun[],
  baselines: BaselineResults,
): ScenarioRun[] {
  const share = (result: LoadResult, baseline: LoadResult) =>
    (100 * result.requestsPerSecond) / baseline.requestsPerSecond;
  return scenarios.map((scenario) => ({
    ...scenario,
    percentOfStringifyBaseline: share(scenario, baselines.stringify),
    ...(scenario.name === 'repeated'
      ? { percentOfPrebuiltBaseline: share(scenario, baselines.prebuilt) }
      : {}),
  }));
}

function describeImport(figures: ImportFigures, label = 'import'): string {
  if (figures.status === 'reused')
    return `${label}: skipped, existing data reused (${figures.reason})`;
  const steps = figures.steps.length ? `\n  in seconds: ${formatImportSteps(figures.steps)}` : '';
  return (
    `${label}: ${figures.records} records in ${figures.seconds.toFixed(2)} s ` +
    `(${perSecond(figures.recordsPerSecond)} records/s, whole process), ` +
    `peak RSS ${mebibytes(figures.peakRssBytes)} (${figures.rssSource})${steps}`
  );
}

function formatFixed(run: FixedRun, settings: { durationSeconds: number; connections: number }) {
  const errors = (result: LoadResult) => result.errors + result.non2xx;
  const scenarioRows = run.scenarios.map((s) => [
    s.name,
    perSecond(s.requestsPerSecond),
    milliseconds(s.latencyMs.p50),
    milliseconds(s.latencyMs.p99),
    errors(s),
    percent(s.percentOfStringifyBaseline),
    percent(s.percentOfPrebuiltBaseline),
  ]);
  const baselineRow = (name: string, result: LoadResult) => [
    name,
    perSecond(result.requestsPerSecond),
    milliseconds(result.latencyMs.p50),
    milliseconds(result.latencyMs.p99),
    errors(result),
    null,
    null,
  ];
  return [
    `fixed URLs (cache figures: each scenario repeats its URLs): ${settings.durationSeconds} s per scenario, ` +
      `${settings.connections} connections`,
    table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', '% of (b)', '% of (a)'],
      [
        ...scenarioRows,
        baselineRow('(a) node:http, prebuilt body', run.baselines.prebuilt),
        baselineRow('(b) node:http, JSON.stringify', run.baselines.stringify),
      ],
    ),
    `errors = non-2xx + socket errors; service peak RSS ${mebibytes(run.servicePeakRssBytes)} ` +
      `(${run.rssSampling})`,
  ].join('\n');
}

export function formatEngineRun(
  run: EngineRun,
  settings: { durationSeconds: number; connections: number },
): string {
  return [
    `${ENGINE_NAMES[run.engine]} (${run.database})`,
    describeImport(run.import),
    ...(run.reimport ? [describeImport(run.reimport, 're-import')] : []),
    ...(run.cold
      ? ['', formatCold(ENGINE_NAMES[run.engine], run.cold, run.engine === 'postgres')]
      : []),
    ...(run.peer ? ['', formatPeer(ENGINE_NAMES[run.engine], run.peer)] : []),
    ...(run.fixed ? ['', formatFixed(run.fixed, settings)] : []),
    ...(run.feed ? ['', formatFeed(run.feed)] : []),
    ...(run.deletes ? [formatDeletes(run.deletes)] : []),
  ].join('\n');
}

const fixed1 = (n: number) => n.toFixed(1);
const thousands = (n: number) => Math.round(n).toLocaleString('en');

export function formatFeed(feed: FeedRun): string {
  const { p50, p99, max } = feed.latencyMs;
  const resources = Object.entries(feed.byResource).map(
    ([resource, figures]) =>
      `${resource} ${figures.pages} p50 ${fixed1(figures.p50)} p99 ${fixed1(figures.p99)} max ${fixed1(figures.max)}`,
  );
  const slowest = feed.slowest.map(
    ({ ms, page, resource }) => `${fixed1(ms)} ms page ${page} (${resource ?? 'empty'})`,
  );
  return [
    `change feed, whole large company at limit=1000: ${thousands(feed.entries)} entries in ${feed.requests} requests, ${fixed1(feed.seconds)} s = ${thousands(feed.entriesPerSecond)} entries/s; per request p50 ${fixed1(p50)} ms, p99 ${fixed1(p99)} ms, max ${fixed1(max)} ms`,
    `  pages by the resource of their first entry, in ms: ${resources.join('; ')}`,
    `  slowest pages (page 1: the first after the start): ${slowest.join(', ')}`,
    `  ${formatLoadGeneratorGc(feed.loadGeneratorGc)}`,
  ].join('\n');
}

function formatLoadGeneratorGc(gc: FeedRun['loadGeneratorGc']): string {
  const forced = gc.forcedEveryPages
    ? `collected between pages every ${gc.forcedEveryPages} (${fixed1(gc.forcedSeconds)} s, left out of the read's)`
    : 'not collected between pages (run without --expose-gc)';
  return `the load generator's own garbage, ${forced}: ${gc.collections} collections inside the pages' timing, ${fixed1(gc.ms)} ms in ${gc.pages} pages`;
}

function formatDeletes(run: DeleteRun): string {
  return `1 % deleted: ${thousands(run.deletes)} delete lines in ${fixed1(run.deleteSeconds)} s = ${thousands(run.deletesPerSecond)} lines/s; brought back: ${thousands(run.restored)} records in ${fixed1(run.restoreSeconds)} s = ${thousands(run.restoredPerSecond)} records/s`;
}

/** The latencies to compare across engines: each cold-mix class of each phase, each fixed scenario. */
function latencies(run: EngineRun): Map<string, LatencySummary> {
  const named = new Map<string, LatencySummary>();
  for (const phase of run.cold?.phases ?? []) {
    for (const [name, figures] of Object.entries(phase.byClass)) {
      named.set(
        `cold ${name} (cache ${phase.cache}, ${phase.connections} conn.)`,
        figures.latencyMs,
      );
    }
  }
  for (const scenario of run.fixed?.scenarios ?? []) named.set(scenario.name, scenario.latencyMs);
  return named;
}

/** PostgreSQL latency over SQLite latency, scenario by scenario (above 1: PostgreSQL slower). */
export function compareLatencies(sqlite: EngineRun, postgres: EngineRun): LatencyComparison[] {
  const pgLatencies = latencies(postgres);
  return [...latencies(sqlite)].flatMap(([scenario, lite]) => {
    const pg = pgLatencies.get(scenario);
    if (pg === undefined) return [];
    return [
      {
        scenario,
        sqliteP50Ms: lite.p50,
        postgresP50Ms: pg.p50,
        p50Ratio: pg.p50 / lite.p50,
        sqliteP99Ms: lite.p99,
        postgresP99Ms: pg.p99,
        p99Ratio: pg.p99 / lite.p99,
      },
    ];
  });
}

export function formatComparison(rows: LatencyComparison[]): string {
  const ratio = (value: number) => `${value.toFixed(2)}x`;
  return [
    'PostgreSQL ÷ SQLite latency',
    table(
      [
        'scenario',
        'SQLite p50',
        'PG p50',
        'PG/SQLite p50',
        'SQLite p99',
        'PG p99',
        'PG/SQLite p99',
      ],
      rows.map((row) => [
        row.scenario,
        milliseconds(row.sqliteP50Ms),
        milliseconds(row.postgresP50Ms),
        ratio(row.p50Ratio),
        milliseconds(row.sqliteP99Ms),
        milliseconds(row.postgresP99Ms),
        ratio(row.p99Ratio),
      ]),
    ),
  ].join('\n');
}
