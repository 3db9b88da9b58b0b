import type { RateLimitDecision, WindowState } from './limiter.ts';

/**
 * Response headers for a rate-limit decision: draft-ietf-httpapi-ratelimit-headers-11
 * `RateLimit-Policy` / `RateLimit` for both windows, plus the legacy `X-RateLimit-*` trio
 * that many clients still read, describing the window that will refuse first.
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const [minute, hour] = decision.windows;
  // On a tie the window that frees a slot later binds: once both are spent, a request sent
  // after the other's reset is still refused (the minute's reset would promise a retry too soon).
  const binding: WindowState =
    hour.remaining < minute.remaining ||
    (hour.remaining === minute.remaining && hour.resetSeconds > minute.resetSeconds)
      ? hour
      : minute;

  const headers: Record<string, string> = {
    'RateLimit-Policy': decision.windows
      .map((w) => `"${w.name}";q=${w.limit};w=${w.windowSeconds}`)
      .join(', '),
    RateLimit: decision.windows
      .map((w) => `"${w.name}";r=${w.remaining};t=${w.resetSeconds}`)
      .join(', '),
    'X-RateLimit-Limit': String(binding.limit),
    'X-RateLimit-Remaining': String(binding.remaining),
    'X-RateLimit-Reset': String(binding.resetSeconds),
  };
  if (!decision.allowed) {
    // A refusal without a computed delay should not happen; never tell a client "retry now".
    headers['Retry-After'] = String(
      Math.max(1, decision.retryAfterSeconds ?? binding.resetSeconds),
    );
  }
  return headers;
}
