import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface LoadTarget {
  /** Absolute URL of the first request; `paths` (absolute paths) are sent in turn when several. */
  url: string;
  paths: string[];
  headers: Record<string, string>;
}

export interface LoadSettings {
  durationSeconds: number;
  connections: number;
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  /** Completed responses, any status. */
  requests: number;
  durationSeconds: number;
  requestsPerSecond: number;
  /** Milliseconds, over every response (autocannon's default), to the microsecond. */
  latencyMs: LatencySummary;
  /** Socket errors, timeouts included. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  bytesPerSecond: number;
}

function summariseLatency(latencyUs: RecordableHistogram): LatencySummary {
  const ms = (us: number) => us / 1000;
  return {
    mean: ms(latencyUs.mean),
    p50: ms(latencyUs.percentile(50)),
    p90: ms(latencyUs.percentile(90)),
    p99: ms(latencyUs.percentile(99)),
    max: ms(latencyUs.max),
  };
}

function summarise(result: autocannon.Result, latencyUs: RecordableHistogram): LoadResult {
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]),
  );
  return {
    requests: result.requests.total,
    durationSeconds: result.duration,
    requestsPerSecond: result.requests.total / result.duration,
    latencyMs: summariseLatency(latencyUs),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    bytesPerSecond: result.throughput.total / result.duration,
  };
}

/**
 * One autocannon run. Latencies are recorded from autocannon's per-response timings into a
 * microsecond histogram, because autocannon's own histogram counts whole milliseconds, too
 * coarse for responses that take one or two.
 */
export function runLoad(target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  const latencyUs = createHistogram();
  let sent = 0;
  const rotatePaths: autocannon.Request[] = [
    {
      setupRequest: (request) => ({
        ...request,
        path: target.paths[sent++ % target.paths.length] as string,
      }),
    },
  ];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: settings.connections,
        duration: settings.durationSeconds,
        headers: target.headers,
        ...(target.paths.length > 1 ? { requests: rotatePaths } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(summarise(result, latencyUs))),
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
    });
  });
}
