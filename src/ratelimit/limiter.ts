/**
 * Per-key rate limiting with two rolling windows (docs/api.md "Rate limits"): never more than
 * `perMinute` accepted requests in any 60 s, nor `perHour` in any 3600 s. Only accepted
 * requests count; a refused one (429) is not recorded. Stores implement `RateLimitStore`:
 * in-process by default, Redis when several instances share one limit.
 */

export interface RateLimits {
  perMinute: number;
  perHour: number;
}

export interface WindowState {
  /** `minute` or `hour`, as named in the RateLimit headers. */
  name: 'minute' | 'hour';
  /** The window's quota. */
  limit: number;
  /** Window length in seconds (60 or 3600). */
  windowSeconds: number;
  /** Requests still allowed in this window after this one. */
  remaining: number;
  /** Whole seconds until the oldest counted request leaves the window (a slot frees); 0 when none is counted. */
  resetSeconds: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Both windows, minute first, as they are after this request (unchanged when refused). */
  windows: [WindowState, WindowState];
  /** When refused: whole seconds after which the same request would be accepted, if nothing else used the slot. */
  retryAfterSeconds: number | null;
}

export interface RateLimitStore {
  /** Counts the request for the key if both windows have room; atomic per key. */
  consume(keyId: string, limits: RateLimits, nowMs?: number): Promise<RateLimitDecision>;
  /**
   * The key's windows as they are, counting nothing: what `consume` would report now, before
   * its request (`allowed` says whether it would be accepted).
   */
  peek(keyId: string, limits: RateLimits, nowMs?: number): Promise<RateLimitDecision>;
  /** What `/readyz` reports about the store's own dependencies (none for the in-process one). */
  checks(): Record<string, 'ok' | 'unreachable'>;
  close(): Promise<void>;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** One window of one key as a store sees it once the request is counted or refused. */
export interface WindowSnapshot {
  /** Accepted requests in the window, this one included when it was accepted. */
  count: number;
  /** Time (ms) of the oldest of them; null when the window is empty. */
  oldestMs: number | null;
  /**
   * Only when refused and this window is full: the time (ms) of the entry that must leave
   * before the window has room, i.e. the (count − limit + 1)-th oldest.
   */
  freeingMs: number | null;
}

export function assertLimits(limits: RateLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
  }
}

/**
 * The decision every store reports, from what it saw of the two windows. Kept here so the
 * in-process and the Redis store answer with the same numbers, headers and Retry-After.
 */
export function decide(
  limits: RateLimits,
  nowMs: number,
  allowed: boolean,
  minute: WindowSnapshot,
  hour: WindowSnapshot,
): RateLimitDecision {
  const windowState = (
    name: 'minute' | 'hour',
    limit: number,
    windowMs: number,
    seen: WindowSnapshot,
  ): WindowState => ({
    name,
    limit,
    windowSeconds: windowMs / 1000,
    // A key's limits can be lowered while it holds more entries than the new quota.
    remaining: Math.max(0, limit - seen.count),
    resetSeconds:
      seen.count > 0 && seen.oldestMs !== null
        ? Math.ceil((seen.oldestMs + windowMs - nowMs) / 1000)
        : 0,
  });
  let retryAfterSeconds: number | null = null;
  if (!allowed) {
    let waitMs = 0;
    for (const [seen, windowMs] of [
      [minute, MINUTE_MS],
      [hour, HOUR_MS],
    ] as const) {
      if (seen.freeingMs !== null) waitMs = Math.max(waitMs, seen.freeingMs + windowMs - nowMs);
    }
    retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  }
  return {
    allowed,
    windows: [
      windowState('minute', limits.perMinute, MINUTE_MS, minute),
      windowState('hour', limits.perHour, HOUR_MS, hour),
    ],
    retryAfterSeconds,
  };
}
