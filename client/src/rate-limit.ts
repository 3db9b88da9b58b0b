/** One window of the `RateLimit` header (draft-ietf-httpapi-ratelimit-headers): remaining and reset. */
export interface RateLimitWindow {
  name: string;
  remaining: number;
  resetSeconds: number;
}

/** Parses `"minute";r=57;t=23, "hour";r=2940;t=1800`; unknown or broken items are skipped. */
export function parseRateLimit(header: string | null): RateLimitWindow[] {
  if (header === null) return [];
  const windows: RateLimitWindow[] = [];
  for (const item of header.split(',')) {
    const [rawName, ...params] = item.trim().split(';');
    const fields = new Map(
      params.map((param) => {
        const [key, value] = param.split('=');
        return [key?.trim(), Number(value?.trim())] as const;
      }),
    );
    const remaining = fields.get('r');
    const reset = fields.get('t');
    if (remaining === undefined || !Number.isFinite(remaining)) continue;
    windows.push({
      name: (rawName ?? '').trim().replace(/^"|"$/g, ''),
      remaining,
      resetSeconds: reset !== undefined && Number.isFinite(reset) ? reset : 0,
    });
  }
  return windows;
}

/**
 * The epoch milliseconds before which the next request would be refused: a window with no
 * request left frees a slot after its `t` seconds. 0 when every window has room.
 */
export function nextRequestAllowedAt(headers: Headers, now = Date.now()): number {
  let at = 0;
  for (const window of parseRateLimit(headers.get('ratelimit'))) {
    if (window.remaining <= 0) at = Math.max(at, now + window.resetSeconds * 1000);
  }
  return at;
}
