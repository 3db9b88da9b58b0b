import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { table } from '../../src/cli/context.ts';
import { openDatabase } from '../../src/db/connect.ts';
import { parseDatabaseUrl } from '../../src/db/database-url.ts';
import { type CompanyData, readCatalog } from '../soak/catalog.ts';
import {
  firstRequests,
  MIX_CLASSES,
  type MixClass,
  type MixRequest,
  makeColdMix,
} from './cold-mix.ts';
import { type CpuPerRequest, cpuPerRequest, cpuTimes } from './cpu.ts';
import type { PreparedDatabase } from './database.ts';
import {
  type ClassFigures,
  type FirstRequestResult,
  type MixResult,
  runFirstRequests,
  runMix,
} from './mix-load.ts';
import { LARGE_COMPANY_ID } from './parameters.ts';
import { mebibytes, RssSampler, startService } from './processes.ts';
import { createKey, serviceEnv } from './service.ts';

/** The cold mix's settings (see `npm run bench -- --help`). */
export interface ColdSettings {
  requests: number;
  seed: number;
  /** The mix's classes whose requests are sent (the others are drawn, then left out). */
  classes: readonly MixClass[];
  durationSeconds: number;
  connections: readonly number[];
  /** Response cache on (the default size) and off (`RESPONSE_CACHE_MB=0`), in this order. */
  cache: readonly ('on' | 'off')[];
  firstRequests: number;
  timeoutMs: number;
}

export interface ColdPhase extends MixResult {
  cache: 'on' | 'off';
  servicePeakRssBytes: number | null;
  /**
   * What a request of the phase (the mix's and the `/me` probe's) cost the service, PostgreSQL
   * and the load generator in CPU. Beside req/s it tells a run that did more work from one that
   * waited more (for cores busy elsewhere, or left idle between the hops of requests). Null off
   * Linux.
   */
  cpu: CpuPerRequest | null;
}

export interface ColdRun {
  mix: { requests: number; seed: number; smallCompanies: number; byClass: Record<string, number> };
  phases: ColdPhase[];
  firstRequests: FirstRequestResult & { servicePeakRssBytes: number | null };
}

/** Small companies whose keys the mix uses, besides the large one. */
const SMALL_COMPANIES = 20;

export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** The cold mix and the keys it is sent with, made once for every part that sends it. */
export interface PreparedMix {
  mix: MixRequest[];
  /** A key of each company the mix reads, by company id. */
  keys: ReadonlyMap<number, string>;
  /** The large company's key of the `/me` probe. */
  probeKey: string;
  smallCompanies: number;
}

export async function prepareMix(
  database: PreparedDatabase,
  settings: ColdSettings,
  dataFile: string,
): Promise<PreparedMix> {
  const url = database.env.DATABASE_URL as string;
  const companies = await readCatalog(url, SMALL_COMPANIES + 1, settings.seed);
  const large = companies.find((company) => company.id === LARGE_COMPANY_ID);
  if (large === undefined) throw new Error(`company ${LARGE_COMPANY_ID} is missing`);
  const small = companies.filter((company) => company !== large);
  const whole = await wholeMix(database, settings, dataFile, large, small);
  const mix = whole.filter((request) => settings.classes.includes(request.class));
  if (mix.length < whole.length) {
    progress(`sending the ${mix.length} requests of ${settings.classes.join(', ')}`);
  }
  const keys = new Map<number, string>();
  for (const { id } of companies) keys.set(id, await createKey(database, id, 'bench-mix'));
  const probeKey = await createKey(database, LARGE_COMPANY_ID, 'bench-probe');
  return { mix, keys, probeKey, smallCompanies: small.length };
}

/**
 * The whole mix of `settings`, drawn from the database, or read from the file it was kept in
 * when it was drawn from the same data file (path, size, time) with the same seed, size and
 * drawing code: drawing it counts hundreds of filters' matches (minutes on PostgreSQL).
 */
async function wholeMix(
  database: PreparedDatabase,
  settings: ColdSettings,
  dataFile: string,
  large: CompanyData,
  small: CompanyData[],
): Promise<MixRequest[]> {
  const data = statSync(dataFile);
  const drawing = readFileSync(new URL('./cold-mix.ts', import.meta.url));
  const key = createHash('sha256')
    .update(JSON.stringify([realpathSync(dataFile), data.size, data.mtimeMs]))
    .update(JSON.stringify([database.engine, settings.seed, settings.requests]))
    .update(drawing)
    .digest('hex')
    .slice(0, 16);
  const kept = join(dirname(dataFile), `mix-${database.engine}-${key}.json`);
  if (existsSync(kept)) {
    progress(`cold mix of ${settings.requests} requests read from ${kept}`);
    return JSON.parse(readFileSync(kept, 'utf8')) as MixRequest[];
  }
  const handle = openDatabase(parseDatabaseUrl(database.env.DATABASE_URL as string));
  try {
    const started = performance.now();
    const mix = await makeColdMix(handle.db, large, small, settings.requests, settings.seed);
    progress(
      `cold mix of ${mix.length} requests made in ${((performance.now() - started) / 1000).toFixed(1)} s, kept in ${kept}`,
    );
    writeFileSync(kept, JSON.stringify(mix));
    return mix;
  } finally {
    await handle.close();
  }
}

/**
 * The cold mix against a service started afresh for every phase (the response cache on or
 * off, at each number of connections), then the first requests after one more restart.
 */
export async function runCold(
  database: PreparedDatabase,
  settings: ColdSettings,
  { mix, keys, probeKey, smallCompanies }: PreparedMix,
): Promise<ColdRun> {
  const phases: ColdPhase[] = [];
  for (const cache of settings.cache) {
    for (const connections of settings.connections) {
      progress(
        `${database.engine}: cold mix, response cache ${cache}, ${connections} connections, ${settings.durationSeconds} s`,
      );
      const env = {
        ...serviceEnv(database),
        ...(cache === 'off' ? { RESPONSE_CACHE_MB: '0' } : {}),
      };
      const service = await startService(env);
      const rss = new RssSampler(service.pid, 200);
      try {
        const before = cpuTimes(service.pid);
        const result = await runMix(service.baseUrl, mix, keys, probeKey, {
          connections,
          durationSeconds: settings.durationSeconds,
          timeoutMs: settings.timeoutMs,
        });
        const sent = result.requests + (result.probe?.requests ?? 0);
        const cpu = cpuPerRequest(before, cpuTimes(service.pid), sent);
        phases.push({ cache, ...result, servicePeakRssBytes: rss.peakBytes, cpu });
      } finally {
        rss.stop();
        await service.stop();
      }
    }
  }
  progress(`${database.engine}: first ${settings.firstRequests} requests after a restart`);
  const service = await startService(serviceEnv(database));
  const rss = new RssSampler(service.pid, 200);
  let first: FirstRequestResult;
  try {
    first = await runFirstRequests(
      service.baseUrl,
      firstRequests(mix, settings.firstRequests),
      keys,
      probeKey,
      settings.timeoutMs,
    );
  } finally {
    rss.stop();
    await service.stop();
  }
  const byClass: Record<string, number> = {};
  for (const request of mix) byClass[request.class] = (byClass[request.class] ?? 0) + 1;
  return {
    mix: { requests: mix.length, seed: settings.seed, smallCompanies, byClass },
    phases,
    firstRequests: { ...first, servicePeakRssBytes: rss.peakBytes },
  };
}

const ms = (value: number) => value.toFixed(1);

/** What came back other than 200, as `503×3 timeout×1`; `-` when every answer was 200. */
export function statuses(figures: {
  statusCodes: Record<string, number>;
  timeouts: number;
  errors: number;
}) {
  const parts = Object.entries(figures.statusCodes)
    .filter(([code]) => code !== '200')
    .map(([code, count]) => `${code}×${count}`);
  if (figures.timeouts > 0) parts.push(`timeout×${figures.timeouts}`);
  if (figures.errors > 0) parts.push(`error×${figures.errors}`);
  return parts.join(' ') || '-';
}

function classRow(name: string, figures: ClassFigures, seconds: number) {
  return [
    name,
    figures.requests,
    (figures.requests / seconds).toFixed(1),
    ms(figures.latencyMs.p50),
    ms(figures.latencyMs.p99),
    ms(figures.latencyMs.max),
    statuses(figures),
  ];
}

/** A phase's CPU a request, PostgreSQL's where the service reads it (else it is another's). */
function cpuLine(cpu: CpuPerRequest | null, postgres: boolean): string[] {
  if (!cpu) return [];
  const msOf = (us: number) => `${(us / 1000).toFixed(2)} ms`;
  const parties = [
    `service ${msOf(cpu.serverUs)}`,
    ...(postgres ? [`PostgreSQL ${msOf(cpu.postgresUs)}`] : []),
    `load generator ${msOf(cpu.generatorUs)}`,
  ];
  return [`CPU a request (the /me probe's counted too): ${parties.join(', ')}`];
}

export function formatCold(engine: string, run: ColdRun, postgres: boolean): string {
  const sections = [
    `${engine}: cold mix of ${run.mix.requests} distinct requests (seed ${run.mix.seed}, the large company and ${run.mix.smallCompanies} small ones)`,
  ];
  for (const phase of run.phases) {
    const rows = MIX_CLASSES.flatMap((name) => {
      const figures = phase.byClass[name];
      return figures ? [classRow(name, figures, phase.durationSeconds)] : [];
    });
    rows.push(
      classRow(
        'all',
        {
          requests: phase.requests,
          latencyMs: phase.latencyMs,
          statusCodes: phase.statusCodes,
          timeouts: phase.timeouts,
          errors: phase.errors,
          slowest: phase.slowest,
        },
        phase.durationSeconds,
      ),
    );
    if (phase.probe) rows.push(classRow('/me probe', phase.probe, phase.durationSeconds));
    sections.push(
      [
        `response cache ${phase.cache}, ${phase.connections} connections, ${phase.durationSeconds.toFixed(0)} s: ` +
          `${phase.requestsPerSecond.toFixed(0)} req/s, service peak RSS ${mebibytes(phase.servicePeakRssBytes)}` +
          (phase.repeated > 0 ? `, ${phase.repeated} requests repeated (the mix ran out)` : ''),
        ...cpuLine(phase.cpu, postgres),
        table(['class', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'not 200'], rows),
        'slowest, and when each was sent (every class keeps its own in the JSON):',
        ...phase.slowest.map(
          (request) =>
            `  ${ms(request.ms)} ms ${request.status} at ${request.atSeconds.toFixed(1)} s ${request.path}`,
        ),
      ].join('\n'),
    );
  }
  const first = run.firstRequests;
  const worst = [...first.requests].sort((a, b) => b.ms - a.ms).slice(0, 3);
  sections.push(
    [
      `first ${first.requests.length} requests after a restart, one at a time: median ${ms(first.medianMs)} ms, worst ${ms(first.worstMs)} ms; ` +
        `/me meanwhile p50 ${ms(first.probe.latencyMs.p50)} ms, p99 ${ms(first.probe.latencyMs.p99)} ms`,
      ...worst.map((request) => `  ${ms(request.ms)} ms ${request.status} ${request.path}`),
    ].join('\n'),
  );
  return sections.join('\n\n');
}
