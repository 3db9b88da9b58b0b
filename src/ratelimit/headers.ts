import type { RateLimitDecision, WindowState } from './limiter.ts';

/** On a tie the window that frees a slot later binds: once both are spent, a request sent
 * after the other's reset is still refused (the minute's reset would promise a retry too soon). */
function bindingWindow([minute, hour]: RateLimitDecision['windows']): WindowState {
  return hour.remaining < minute.remaining ||
    (hour.remaining === minute.remaining && hour.resetSeconds > minute.resetSeconds)
    ? hour
    : minute;
}

/**
 * The headers of the key's two windows: draft-ietf-httpapi-ratelimit-headers-11
 * `RateLimit-Policy` / `RateLimit` for both, plus the legacy `X-RateLimit-*` trio that many
 * clients still read, describing the window that will refuse first.
 */
export function windowHeaders(windows: RateLimitDecision['windows']): Record<string, string> {
  const binding = bindingWindow(windows);
  return {
    'RateLimit-Policy': windows
      .map((w) => `"${w.name}";q=${w.limit};w=${w.windowSeconds}`)
      .join(', '),
    RateLimit: windows.map((w) => `"${w.name}";r=${w.remaining};t=${w.resetSeconds}`).join(', '),
    'X-RateLimit-Limit': String(binding.limit),
    'X-RateLimit-Remaining': String(binding.remaining),
    'X-RateLimit-Reset': String(binding.resetSeconds),
  };
}

/** Response headers for a rate-limit decision: the windows', and `Retry-After` on a refusal. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers = windowHeaders(decision.windows);
  if (!decision.allowed) {
    // A refusal without a computed delay should not happen; never tell a client "retry now".
    headers['Retry-After'] = String(
      Math.max(1, decision.retryAfterSeconds ?? bindingWindow(decision.windows).resetSeconds),
    );
  }
  return headers;
}
