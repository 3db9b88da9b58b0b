import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/** How a run is cut into report intervals; the last one may be shorter. */
export interface IntervalPlan {
  durationSeconds: number;
  intervalSeconds: number;
  /** Intervals that start before this much time are warm-up. */
  warmupSeconds: number;
}

export function intervalCount(plan: IntervalPlan): number {
  return Math.ceil(plan.durationSeconds / plan.intervalSeconds);
}

/** Warm-up intervals: every interval that starts before the warm-up ends. */
export function warmupIntervalCount(plan: IntervalPlan): number {
  return Math.min(Math.ceil(plan.warmupSeconds / plan.intervalSeconds), intervalCount(plan));
}

/** Latency figures of a histogram of microseconds, in milliseconds. */
export interface LatencyFigures {
  p50: number;
  p99: number;
  max: number;
}

/** Records a latency in a histogram of whole microseconds (at least 1: it takes no zero). */
export function recordLatency(histogram: RecordableHistogram, latencyMs: number): void {
  histogram.record(Math.max(1, Math.round(latencyMs * 1000)));
}

export function latencyFigures(histogram: RecordableHistogram): LatencyFigures {
  return {
    p50: histogram.percentile(50) / 1000,
    p99: histogram.percentile(99) / 1000,
    max: histogram.max / 1000,
  };
}

export interface IntervalFigures {
  /** 1-based. */
  number: number;
  startSeconds: number;
  endSeconds: number;
  warmup: boolean;
  /** Calls answered (or failed) in the interval. */
  requests: number;
  errors: number;
  latencyMs: LatencyFigures | null;
  /** The median and highest service VmRSS sampled in the interval. */
  rssMedianBytes: number | null;
  rssMaxBytes: number | null;
  /** How late the load generator sent calls at worst: its own lag, not the service's. */
  maxSendLagMs: number;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface Drift {
  /** Median RSS of the first interval after warm-up. */
  baselineBytes: number;
  /** Median RSS of the last interval. */
  finalBytes: number;
  /** (final − baseline) ÷ baseline × 100: growth is positive. */
  percent: number;
  /**
   * Least-squares line through every RSS sample after warm-up, its rise over that window as a
   * share of the baseline: the trend, for information (the check uses `percent`).
   */
  fittedPercent: number | null;
}

/** Least-squares slope of y over x, or null with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number | null {
  const n = points.length;
  if (n < 2) return null;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const { x, y } of points) {
    covariance += (x - meanX) * (y - meanY);
    variance += (x - meanX) ** 2;
  }
  return variance === 0 ? null : covariance / variance;
}

export interface RssSample {
  seconds: number;
  bytes: number;
}

/**
 * RSS drift after warm-up: the median of the last interval against the median of the first
 * interval after warm-up. Medians, because garbage collection makes RSS a saw-tooth whose
 * single samples say little; null when there are not two such intervals with samples.
 */
export function rssDrift(
  intervals: readonly IntervalFigures[],
  samples: readonly RssSample[],
): Drift | null {
  const measured = intervals.filter((interval) => !interval.warmup);
  const first = measured[0];
  const last = measured.at(-1);
  if (measured.length < 2 || first === undefined || last === undefined) return null;
  const baselineBytes = first.rssMedianBytes;
  const finalBytes = last.rssMedianBytes;
  if (baselineBytes === null || finalBytes === null) return null;
  const after = samples.filter((sample) => sample.seconds >= first.startSeconds);
  const perSecond = slope(after.map((sample) => ({ x: sample.seconds, y: sample.bytes })));
  const window = last.endSeconds - first.startSeconds;
  return {
    baselineBytes,
    finalBytes,
    percent: (100 * (finalBytes - baselineBytes)) / baselineBytes,
    fittedPercent: perSecond === null ? null : (100 * perSecond * window) / baselineBytes,
  };
}

interface Bucket {
  requests: number;
  errors: number;
  latencyUs: RecordableHistogram;
  rss: number[];
  maxSendLagMs: number;
}

const newBucket = (): Bucket => ({
  requests: 0,
  errors: 0,
  latencyUs: createHistogram(),
  rss: [],
  maxSendLagMs: 0,
});

/** Collects answers, RSS samples and send lag into the run's intervals, by time since start. */
export class IntervalRecorder {
  private readonly buckets: Bucket[];
  readonly samples: RssSample[] = [];
  private readonly warmupCount: number;
  private start = performance.now();

  private readonly plan: IntervalPlan;

  constructor(plan: IntervalPlan) {
    this.plan = plan;
    this.buckets = Array.from({ length: intervalCount(plan) }, newBucket);
    this.warmupCount = warmupIntervalCount(plan);
  }

  /** Starts the clock the intervals are cut by. */
  begin(): void {
    this.start = performance.now();
  }

  answer(latencyMs: number, failed: boolean): void {
    const bucket = this.current();
    bucket.requests++;
    if (failed) bucket.errors++;
    recordLatency(bucket.latencyUs, latencyMs);
  }

  rss(bytes: number): void {
    this.samples.push({ seconds: this.elapsedSeconds(), bytes });
    this.current().rss.push(bytes);
  }

  sendLag(lagMs: number): void {
    const bucket = this.current();
    bucket.maxSendLagMs = Math.max(bucket.maxSendLagMs, lagMs);
  }

  elapsedSeconds(): number {
    return (performance.now() - this.start) / 1000;
  }

  figures(index: number): IntervalFigures {
    const bucket = this.buckets[index];
    if (bucket === undefined) throw new Error(`no interval ${index + 1}`);
    const { intervalSeconds, durationSeconds } = this.plan;
    return {
      number: index + 1,
      startSeconds: index * intervalSeconds,
      endSeconds: Math.min((index + 1) * intervalSeconds, durationSeconds),
      warmup: index < this.warmupCount,
      requests: bucket.requests,
      errors: bucket.errors,
      latencyMs: bucket.requests === 0 ? null : latencyFigures(bucket.latencyUs),
      rssMedianBytes: median(bucket.rss),
      rssMaxBytes: bucket.rss.length === 0 ? null : Math.max(...bucket.rss),
      maxSendLagMs: bucket.maxSendLagMs,
    };
  }

  /** Answers that arrive after the run's end (the last calls draining) count in the last one. */
  private current(): Bucket {
    const index = Math.floor(this.elapsedSeconds() / this.plan.intervalSeconds);
    return this.buckets[Math.min(index, this.buckets.length - 1)] as Bucket;
  }
}
