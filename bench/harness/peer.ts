import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ColdSettings, type PreparedMix, progress } from './cold.ts';
import { MIX_CLASSES, type MixClass, type MixRequest } from './cold-mix.ts';
import { type CpuPerRequest, cpuPerRequest, cpuTimes } from './cpu.ts';
import type { PreparedDatabase } from './database.ts';
import { type MixResult, runMix } from './mix-load.ts';
import { translateRequest } from './peer-requests.ts';
import { type Service, startListening, startService } from './processes.ts';
import { serviceEnv } from './service.ts';

/**
 * The peer part of the benchmark: Platformatic DB (bench/peer, its own npm package, installed
 * on demand) serving the same PostgreSQL tables, asked the cold mix's requests translated to
 * its REST API (see peer-requests.ts), side by side with the service. Both get the same pool
 * size; the service runs with its response cache off, as the peer has none. Samples of every
 * class are checked first: the same ids in the same order and the same totals from both.
 *
 * Each class is measured alone, the service's run and the peer's one after the other (who
 * goes first alternates from class to class, as the first warms PostgreSQL's caches for the
 * second). In a run of the whole mix every class gets its share of the same answers, so its
 * req/s only mirrors the whole run's; alone, a class's req/s is its own.
 */

const PEER_DIR = fileURLToPath(new URL('../peer/', import.meta.url));
const PEER_NODE = `${PEER_DIR}node_modules/.bin/node`;
const PEER_PACKAGE = `${PEER_DIR}node_modules/@platformatic/db/package.json`;
/** Both sides' PostgreSQL pool: the service's default. */
const POOL_SIZE = 10;
/** Requests of each class whose answers are compared before measuring. */
const CHECKS_PER_CLASS = 5;

const execFileAsync = promisify(execFile);

/** `npm ci` in bench/peer when its packages are missing: only the peer part pays for them. */
export async function ensurePeerInstalled(): Promise<void> {
  if (existsSync(PEER_NODE) && existsSync(PEER_PACKAGE)) return;
  progress('installing the peer (npm ci --prefix bench/peer)');
  try {
    await execFileAsync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund']);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`npm ci --prefix bench/peer failed: ${stderr || (error as Error).message}`);
  }
}

function startPeer(databaseUrl: string): Promise<Service> {
  return startListening(
    PEER_NODE,
    [`${PEER_DIR}serve.js`],
    { ...process.env, PEER_DATABASE_URL: databaseUrl, PEER_POOL_SIZE: String(POOL_SIZE) },
    'the peer (Platformatic DB)',
  );
}

/**
 * One side's run: the figures of `runMix`, per class only for the whole mix, and what a
 * request cost the side's server, PostgreSQL and the load generator in CPU (null off Linux).
 */
export type Side = { cpu: CpuPerRequest | null } & Pick<
  MixResult,
  | 'durationSeconds'
  | 'requests'
  | 'requestsPerSecond'
  | 'repeated'
  | 'latencyMs'
  | 'statusCodes'
  | 'timeouts'
  | 'errors'
> &
  Partial<Pick<MixResult, 'byClass'>>;

/** A request of the mix as the service is sent it, and as the peer is. */
interface Pair {
  ours: MixRequest;
  theirs: MixRequest;
}

export interface PeerComparison {
  /** A class alone, or `all`: every comparable request of the mix, in its order. */
  class: MixClass | 'all';
  /** Distinct requests sent (each side sends them again from the first if it runs out). */
  requests: number;
  /** Requests of the class the peer cannot be asked, left out on both sides. */
  left: number;
  first: 'service' | 'peer';
  service: Side;
  peer: Side;
  /** The service's req/s over the peer's. */
  ratio: number;
}

export interface PeerCheck {
  class: MixClass;
  path: string;
  peerPath: string;
  /** Ids both answered, in the same order. */
  ids: number;
  total: number | null;
}

export interface PeerRun {
  /** What served as the peer; `poolSize` is both sides' PostgreSQL pool. */
  peer: { package: string; version: string; node: string; poolSize: number };
  durationSeconds: number;
  notComparable: { class: MixClass; requests: number; reason: string }[];
  checks: PeerCheck[];
  phases: { connections: number; comparisons: PeerComparison[] }[];
}

interface Answer {
  status: number;
  ids: number[];
  total: number | null;
}

const idsOf = (rows: { id: number | string }[]) => rows.map((row) => Number(row.id));

async function serviceAnswer(baseUrl: string, request: MixRequest, key: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}${request.path}`, {
    headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' },
  });
  const body = (await response.json()) as {
    data?: { id: number } | { id: number }[];
    meta?: { total: number };
  };
  // A look-up of an id the company does not hold is a 404, as the peer's empty list is.
  if (response.status === 404) return { status: 200, ids: [], total: null };
  const data = body.data ?? [];
  return {
    status: response.status,
    ids: idsOf(Array.isArray(data) ? data : [data]),
    total: body.meta?.total ?? null,
  };
}

async function peerAnswer(baseUrl: string, path: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`);
  const body = (await response.json()) as { id: string }[];
  // Sent for totalCount=true only: never for a look-up by id or a reference list.
  const total = response.headers.get('x-total-count');
  return {
    status: response.status,
    ids: response.status === 200 ? idsOf(body) : [],
    total: total === null ? null : Number(total),
  };
}

/** Samples of every class answered by both: the same ids in the same order, the same total. */
async function checkTranslations(
  service: Service,
  peer: Service,
  pairs: Pair[],
  keys: ReadonlyMap<number, string>,
): Promise<PeerCheck[]> {
  const checks: PeerCheck[] = [];
  for (const mixClass of MIX_CLASSES) {
    const samples = pairs.filter(({ ours }) => ours.class === mixClass).slice(0, CHECKS_PER_CLASS);
    for (const { ours, theirs } of samples) {
      const a = await serviceAnswer(service.baseUrl, ours, keys.get(ours.companyId) as string);
      const b = await peerAnswer(peer.baseUrl, theirs.path);
      const same =
        a.status === 200 &&
        b.status === 200 &&
        a.total === b.total &&
        a.ids.length === b.ids.length &&
        a.ids.every((id, i) => id === b.ids[i]);
      if (!same) {
        throw new Error(
          `the peer answers ${theirs.path} unlike the service answers ${ours.path} ` +
            `(company ${ours.companyId}): service ${a.status}, total ${a.total}, ids ${a.ids.join(',')}; ` +
            `peer ${b.status}, total ${b.total}, ids ${b.ids.join(',')}`,
        );
      }
      checks.push({
        class: mixClass,
        path: ours.path,
        peerPath: theirs.path,
        ids: a.ids.length,
        total: a.total,
      });
    }
  }
  return checks;
}

function sideOf(
  { result, cpu }: { result: MixResult; cpu: CpuPerRequest | null },
  withClasses: boolean,
): Side {
  return {
    cpu,
    durationSeconds: result.durationSeconds,
    requests: result.requests,
    requestsPerSecond: result.requestsPerSecond,
    repeated: result.repeated,
    latencyMs: result.latencyMs,
    statusCodes: result.statusCodes,
    timeouts: result.timeouts,
    errors: result.errors,
    ...(withClasses ? { byClass: result.byClass } : {}),
  };
}

/** Every comparable request in the mix's order, then each class's alone. */
function groupsOf(pairs: Pair[]): Map<MixClass | 'all', Pair[]> {
  const groups = new Map<MixClass | 'all', Pair[]>([['all', pairs]]);
  for (const name of MIX_CLASSES) {
    const group = pairs.filter(({ ours }) => ours.class === name);
    if (group.length > 0) groups.set(name, group);
  }
  return groups;
}

const versionOf = (packageJson: string) =>
  (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;

/** The mix's requests the peer can be asked, paired with its translation; the others, by class. */
function translateMix(mix: MixRequest[]) {
  const pairs: Pair[] = [];
  const left = new Map<MixClass, { requests: number; reasons: Set<string> }>();
  for (const request of mix) {
    const translation = translateRequest(request);
    if ('peerPath' in translation) {
      pairs.push({ ours: request, theirs: { ...request, path: translation.peerPath } });
      continue;
    }
    const entry = left.get(request.class) ?? { requests: 0, reasons: new Set<string>() };
    entry.requests++;
    entry.reasons.add(translation.notComparable);
    left.set(request.class, entry);
  }
  const notComparable = [...left].map(([name, entry]) => ({
    class: name,
    requests: entry.requests,
    reason: [...entry.reasons].join('; '),
  }));
  return { pairs, notComparable };
}

type Run = (target: Service, requests: MixRequest[]) => Promise<MixResult>;

/** `run`, and what its requests cost each party in CPU. */
async function measured(run: Run, target: Service, requests: MixRequest[]) {
  const before = cpuTimes(target.pid);
  const result = await run(target, requests);
  return { result, cpu: cpuPerRequest(before, cpuTimes(target.pid), result.requests) };
}

/** One group's runs on both sides, `first` first. */
async function compare(
  run: Run,
  sides: { service: Service; peer: Service },
  group: Pair[],
  first: 'service' | 'peer',
) {
  const ours = () =>
    measured(
      run,
      sides.service,
      group.map((pair) => pair.ours),
    );
  const theirs = () =>
    measured(
      run,
      sides.peer,
      group.map((pair) => pair.theirs),
    );
  if (first === 'service') {
    const service = await ours();
    return { service, peer: await theirs() };
  }
  const peer = await theirs();
  return { service: await ours(), peer };
}

/**
 * The mix's comparable requests sent to the service (response cache off) and to the peer, at
 * each of the cold mix's numbers of connections, for its duration per run.
 */
export async function runPeer(
  database: PreparedDatabase,
  settings: ColdSettings,
  { mix, keys }: PreparedMix,
): Promise<PeerRun> {
  const { pairs, notComparable } = translateMix(mix);
  const env = {
    ...serviceEnv(database),
    RESPONSE_CACHE_MB: '0',
    DATABASE_POOL_MAX: String(POOL_SIZE),
  };
  progress(`${database.engine}: starting the service and the peer (Platformatic DB)`);
  const service = await startService(env);
  let peer: Service | undefined;
  try {
    peer = await startPeer(database.env.DATABASE_URL as string);
    progress(`${database.engine}: checking the peer answers as the service does`);
    const checks = await checkTranslations(service, peer, pairs, keys);
    const phases: PeerRun['phases'] = [];
    for (const connections of settings.connections) {
      const run: Run = (target, requests) =>
        runMix(target.baseUrl, requests, keys, null, {
          connections,
          durationSeconds: settings.durationSeconds,
          timeoutMs: settings.timeoutMs,
        });
      const comparisons: PeerComparison[] = [];
      for (const [name, group] of groupsOf(pairs)) {
        const first = comparisons.length % 2 === 0 ? 'service' : 'peer';
        progress(
          `${database.engine}: ${name} on the service and the peer, ${connections} connections, ${settings.durationSeconds} s each`,
        );
        const result = await compare(run, { service, peer }, group, first);
        const left =
          name === 'all'
            ? mix.length - pairs.length
            : (notComparable.find((entry) => entry.class === name)?.requests ?? 0);
        comparisons.push({
          class: name,
          requests: group.length,
          left,
          first,
          service: sideOf(result.service, name === 'all'),
          peer: sideOf(result.peer, name === 'all'),
          ratio: result.service.result.requestsPerSecond / result.peer.result.requestsPerSecond,
        });
      }
      phases.push({ connections, comparisons });
    }
    return {
      peer: {
        package: '@platformatic/db',
        version: versionOf(PEER_PACKAGE),
        node: `v${versionOf(`${PEER_DIR}node_modules/node/package.json`)}`,
        poolSize: POOL_SIZE,
      },
      durationSeconds: settings.durationSeconds,
      notComparable,
      checks,
      phases,
    };
  } finally {
    await peer?.stop();
    await service.stop();
  }
}
