/**
 * Failed admin logins per client address: after `limit` failures within `windowMs`, every
 * request from that address is refused (429) until the oldest of them leaves the window, the
 * right token included, so guessing gains nothing from going on. In-process: each instance
 * counts its own, which bounds guessing per instance, and the admin port is not public.
 */
export class LoginFailures {
  private readonly failures = new Map<string, number[]>();

  private readonly limit: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(limit = 10, windowMs = 60_000, now: () => number = Date.now) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.now = now;
  }

  /** Seconds until `address` may try again; 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const recent = this.recent(address);
    if (recent.length < this.limit) return 0;
    const oldest = recent[recent.length - this.limit] as number;
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.now()) / 1000));
  }

  record(address: string): void {
    const recent = this.recent(address);
    recent.push(this.now());
    this.failures.set(address, recent.slice(-this.limit));
    // Bounded memory under a flood of addresses: forget the addresses whose failures are old.
    if (this.failures.size > 10_000) this.forgetExpired();
  }

  private recent(address: string): number[] {
    const since = this.now() - this.windowMs;
    return (this.failures.get(address) ?? []).filter((at) => at > since);
  }

  private forgetExpired(): void {
    for (const address of [...this.failures.keys()]) {
      if (this.recent(address).length === 0) this.failures.delete(address);
    }
  }
}
