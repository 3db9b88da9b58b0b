import { Agent, request } from 'node:http';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { MixClass, MixRequest } from './cold-mix.ts';
import type { LatencySummary } from './load.ts';

/**
 * Sends a mix of distinct URLs over `connections` keep-alive connections for a while, each
 * connection sending its next request when the previous answer has arrived, and reports the
 * latency of every class of request on its own. Meanwhile a probe on a connection of its own
 * sends `/me` every PROBE_INTERVAL_MS (given a key for it): what a cheap request meets while
 * heavy ones run.
 */

export interface MixSettings {
  connections: number;
  durationSeconds: number;
  /** A request without an answer after this long is abandoned and counted as a timeout. */
  timeoutMs: number;
}

export interface ClassFigures {
  requests: number;
  latencyMs: LatencySummary;
  statusCodes: Record<string, number>;
  timeouts: number;
  errors: number;
  /** The SLOWEST_KEPT slowest requests, slowest first (where to look when a p99 is high). */
  slowest: SlowRequest[];
}

export interface SlowRequest {
  path: string;
  status: number;
  ms: number;
  /**
   * When it was sent, in seconds from the start of its phase (of its probe): a phase's first
   * requests meet a new process, a steady one's do not (docs/performance.md, item 101).
   */
  atSeconds: number;
}

const SLOWEST_KEPT = 5;

export interface MixResult {
  connections: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  /** Requests sent again because the run outlasted the mix (their answers may be cached). */
  repeated: number;
  latencyMs: LatencySummary;
  statusCodes: Record<string, number>;
  timeouts: number;
  errors: number;
  slowest: SlowRequest[];
  byClass: Partial<Record<MixClass, ClassFigures>>;
  /** `/me` on its own connection while the mix ran; null when no probe was asked for. */
  probe: ClassFigures | null;
}

const PROBE_INTERVAL_MS = 50;

/** One request's outcome: its status (0 for a socket error, -1 for a timeout) and latency. */
interface Outcome {
  status: number;
  ms: number;
}

export function send(
  agent: Agent,
  baseUrl: URL,
  path: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: baseUrl.hostname,
        port: baseUrl.port,
        // A bare origin's pathname is `/`; `path` brings its own.
        path: `${baseUrl.pathname.replace(/\/$/, '')}${path}`,
        headers,
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }),
        );
        res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve({ status: -1, ms: performance.now() - started });
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end();
  });
}

export function summarise(histogram: RecordableHistogram): LatencySummary {
  if (histogram.count === 0) return { mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const ms = (us: number) => us / 1000;
  return {
    mean: ms(histogram.mean),
    p50: ms(histogram.percentile(50)),
    p90: ms(histogram.percentile(90)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
  };
}

/** Latencies and statuses of one group of requests. */
export class Tally {
  readonly histogram = createHistogram();
  readonly statusCodes: Record<string, number> = {};
  timeouts = 0;
  errors = 0;
  readonly slowest: SlowRequest[] = [];

  record({ status, ms }: Outcome, path: string, atSeconds: number): void {
    this.histogram.record(Math.max(1, Math.round(ms * 1000)));
    if (status === -1) this.timeouts++;
    else if (status === 0) this.errors++;
    else this.statusCodes[status] = (this.statusCodes[status] ?? 0) + 1;
    const last = this.slowest.at(-1);
    if (this.slowest.length < SLOWEST_KEPT || (last !== undefined && ms > last.ms)) {
      const at = Math.round(atSeconds * 100) / 100;
      this.slowest.push({ path, status, ms: Math.round(ms * 10) / 10, atSeconds: at });
      this.slowest.sort((a, b) => b.ms - a.ms);
      this.slowest.length = Math.min(this.slowest.length, SLOWEST_KEPT);
    }
  }

  figures(): ClassFigures {
    return {
      requests: this.histogram.count,
      latencyMs: summarise(this.histogram),
      statusCodes: this.statusCodes,
      timeouts: this.timeouts,
      errors: this.errors,
      slowest: this.slowest,
    };
  }
}

export const authHeaders = (key: string, gzip: boolean): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  'accept-encoding': gzip ? 'gzip' : 'identity',
});

/** Sends `/me` every PROBE_INTERVAL_MS until stopped. */
export function startProbe(baseUrl: URL, key: string, timeoutMs: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const tally = new Tally();
  let running = true;
  const began = performance.now();
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const outcome = await send(agent, baseUrl, '/me', authHeaders(key, false), timeoutMs);
      tally.record(outcome, '/me', (started - began) / 1000);
      const left = PROBE_INTERVAL_MS - (performance.now() - started);
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    }
  })();
  return {
    async stop(): Promise<ClassFigures> {
      running = false;
      await done;
      agent.destroy();
      return tally.figures();
    },
  };
}

export async function runMix(
  baseUrl: string,
  mix: MixRequest[],
  keys: ReadonlyMap<number, string>,
  probeKey: string | null,
  settings: MixSettings,
): Promise<MixResult> {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: settings.connections });
  const overall = new Tally();
  const byClass = new Map<MixClass, Tally>();
  const deadline = performance.now() + settings.durationSeconds * 1000;
  let next = 0;
  const probe = probeKey === null ? null : startProbe(base, probeKey, settings.timeoutMs);
  const started = performance.now();
  const connection = async () => {
    while (performance.now() < deadline) {
      const item = mix[next++ % mix.length] as MixRequest;
      const key = keys.get(item.companyId);
      if (key === undefined) throw new Error(`no key for company ${item.companyId}`);
      const sentAt = (performance.now() - started) / 1000;
      const outcome = await send(
        agent,
        base,
        item.path,
        authHeaders(key, item.gzip),
        settings.timeoutMs,
      );
      overall.record(outcome, item.path, sentAt);
      let tally = byClass.get(item.class);
      if (tally === undefined) {
        tally = new Tally();
        byClass.set(item.class, tally);
      }
      tally.record(outcome, item.path, sentAt);
    }
  };
  await Promise.all(Array.from({ length: settings.connections }, connection));
  const seconds = (performance.now() - started) / 1000;
  const probeFigures = probe === null ? null : await probe.stop();
  agent.destroy();
  const figures = overall.figures();
  return {
    connections: settings.connections,
    durationSeconds: seconds,
    requests: figures.requests,
    requestsPerSecond: figures.requests / seconds,
    repeated: Math.max(0, next - mix.length),
    latencyMs: figures.latencyMs,
    statusCodes: figures.statusCodes,
    timeouts: figures.timeouts,
    errors: figures.errors,
    slowest: figures.slowest,
    byClass: Object.fromEntries([...byClass].map(([name, tally]) => [name, tally.figures()])),
    probe: probeFigures,
  };
}

export interface FirstRequestResult {
  requests: { class: MixClass; path: string; status: number; ms: number }[];
  medianMs: number;
  worstMs: number;
  probe: ClassFigures;
}

/** Sends `mix` one request at a time to a service that has just started, `/me` probed meanwhile. */
export async function runFirstRequests(
  baseUrl: string,
  mix: MixRequest[],
  keys: ReadonlyMap<number, string>,
  probeKey: string,
  timeoutMs: number,
): Promise<FirstRequestResult> {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const probe = startProbe(base, probeKey, timeoutMs);
  const requests: FirstRequestResult['requests'] = [];
  for (const item of mix) {
    const key = keys.get(item.companyId) as string;
    const { status, ms } = await send(
      agent,
      base,
      item.path,
      authHeaders(key, item.gzip),
      timeoutMs,
    );
    requests.push({ class: item.class, path: item.path, status, ms });
  }
  const probeFigures = await probe.stop();
  agent.destroy();
  const sorted = requests.map((r) => r.ms).sort((a, b) => a - b);
  return {
    requests,
    medianMs: sorted[Math.floor((sorted.length - 1) / 2)] ?? 0,
    worstMs: sorted.at(-1) ?? 0,
    probe: probeFigures,
  };
}
