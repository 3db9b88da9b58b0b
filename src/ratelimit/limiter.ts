/**
 * Per-key rate limiting with two rolling windows (PRODUCT.md §6): never more than
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
  close(): Promise<void>;
}
