import {
  assertLimits,
  decide,
  HOUR_MS,
  MINUTE_MS,
  type RateLimitDecision,
  type RateLimitStore,
  type RateLimits,
} from './limiter.ts';

const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const MIN_CAPACITY = 8;

export interface MemoryRateLimitStoreOptions {
  /** How often idle keys are dropped; the lazy pruning in `consume` only reaches active keys. */
  sweepIntervalMs?: number;
}

/**
 * Accepted-request timestamps (ms) of one key, oldest first, in a growable ring buffer: a
 * busy key holds up to `perHour` entries and entries leave from the front, so a plain array
 * would either shift on every expiry or keep garbage in front of the head.
 */
class TimestampRing {
  private buf = new Float64Array(MIN_CAPACITY);
  private head = 0;
  length = 0;

  at(i: number): number {
    // Capacity is always a power of two, so masking replaces a modulo.
    return this.buf[(this.head + i) & (this.buf.length - 1)] as number;
  }

  push(t: number): void {
    if (this.length === this.buf.length) this.resize(this.buf.length * 2);
    this.buf[(this.head + this.length) & (this.buf.length - 1)] = t;
    this.length += 1;
  }

  /** Drops entries at or before `cutoffMs`, i.e. those that have left the window ending now. */
  dropThrough(cutoffMs: number): void {
    while (this.length > 0 && this.at(0) <= cutoffMs) {
      this.head = (this.head + 1) & (this.buf.length - 1);
      this.length -= 1;
    }
    // Give memory back after a burst, without thrashing around a steady size.
    if (this.buf.length > MIN_CAPACITY && this.length * 4 <= this.buf.length) {
      this.resize(Math.max(MIN_CAPACITY, this.buf.length / 2));
    }
  }

  /** Index of the first entry after `cutoffMs` (`length` when none); entries are sorted. */
  firstAfter(cutoffMs: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid) <= cutoffMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private resize(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.length; i += 1) next[i] = this.at(i);
    this.buf = next;
    this.head = 0;
  }
}

/**
 * In-process `RateLimitStore`: exact per key because `consume` reads and records without
 * yielding to the event loop. Only valid for a single instance; several instances need a
 * shared store. `nowMs` must be on the `Date.now()` timebase, since the sweep uses it.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly logs = new Map<string, TimestampRing>();
  private readonly timer: NodeJS.Timeout;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    const interval = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    if (!(interval > 0)) throw new RangeError(`sweepIntervalMs must be > 0, got ${interval}`);
    this.timer = setInterval(() => this.sweep(), interval);
    // The sweep only frees memory; it must never keep the process alive.
    this.timer.unref();
  }

  async consume(keyId: string, limits: RateLimits, nowMs = Date.now()): Promise<RateLimitDecision> {
    return this.step(keyId, limits, nowMs, true);
  }

  async peek(keyId: string, limits: RateLimits, nowMs = Date.now()): Promise<RateLimitDecision> {
    return this.step(keyId, limits, nowMs, false);
  }

  // Synchronous: the read-check-record sequence must be one step, with no await in it.
  private step(
    keyId: string,
    limits: RateLimits,
    nowMs: number,
    record: boolean,
  ): RateLimitDecision {
    assertLimits(limits);
    if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be finite, got ${nowMs}`);

    let log = this.logs.get(keyId);
    if (log) {
      log.dropThrough(nowMs - HOUR_MS);
      if (log.length === 0) {
        this.logs.delete(keyId);
        log = undefined;
      }
    }

    // The ring holds exactly the last hour, so the hour window is all of it and the minute
    // window a suffix of it; pushing one entry grows both counts and moves neither start.
    let hourCount = log?.length ?? 0;
    const minuteStart = log ? log.firstAfter(nowMs - MINUTE_MS) : 0;
    let minuteCount = hourCount - minuteStart;

    const allowed = minuteCount < limits.perMinute && hourCount < limits.perHour;
    if (allowed && record) {
      if (!log) {
        log = new TimestampRing();
        this.logs.set(keyId, log);
      }
      // If the wall clock stepped back, record at the newest time seen instead: the ring must
      // stay sorted, and holding the slot slightly longer errs on the side of the limit.
      const last = log.length > 0 ? log.at(log.length - 1) : nowMs;
      log.push(Math.max(nowMs, last));
      hourCount += 1;
      minuteCount += 1;
    }

    const entry = (index: number): number | null =>
      log && index < log.length ? log.at(index) : null;
    // count - limit + 1 of the oldest entries must leave before a full window has room.
    const freeing = (count: number, limit: number): number | null =>
      !allowed && count >= limit ? entry(hourCount - limit) : null;
    return decide(
      limits,
      nowMs,
      allowed,
      {
        count: minuteCount,
        oldestMs: minuteCount > 0 ? entry(minuteStart) : null,
        freeingMs: freeing(minuteCount, limits.perMinute),
      },
      {
        count: hourCount,
        oldestMs: hourCount > 0 ? entry(0) : null,
        freeingMs: freeing(hourCount, limits.perHour),
      },
    );
  }

  /** Drops every key whose entries have all left the hour window. */
  sweep(nowMs = Date.now()): void {
    for (const [keyId, log] of this.logs) {
      log.dropThrough(nowMs - HOUR_MS);
      if (log.length === 0) this.logs.delete(keyId);
    }
  }

  /** Number of keys currently holding entries (for tests and metrics). */
  size(): number {
    return this.logs.size;
  }

  checks(): Record<string, 'ok' | 'unreachable'> {
    return {};
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.logs.clear();
  }
}
