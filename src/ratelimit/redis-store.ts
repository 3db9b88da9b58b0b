import { randomBytes } from 'node:crypto';
import { Redis, type Result } from 'ioredis';
import { ConfigError } from '../config-error.ts';
import {
  assertLimits,
  decide,
  type RateLimitDecision,
  type RateLimitStore,
  type RateLimits,
} from './limiter.ts';
import { MemoryRateLimitStore } from './memory-store.ts';

/**
 * One atomic step per request, the same algorithm as the in-process store: a sorted set per
 * key holds the times (ms) of the accepted requests of the last hour. Times come from the
 * Redis server's clock, so instances whose clocks disagree still share one timeline; tests
 * may pass their own time as ARGV[3].
 *
 * Numbers cross into Redis as Lua numbers (Redis formats them exactly) and come back as the
 * score strings Redis formats, never through Lua's `tostring`, which keeps only 14 digits.
 *
 * KEYS[1] the key's sorted set; ARGV: perMinute, perHour, now ('' = server time), member ('' =
 * record nothing: a peek, which reports what a request would meet). Returns { allowed, now,
 * hourCount, minuteCount, minuteOldest, hourOldest, minuteFreeing, hourFreeing }; the last four
 * are score strings or nil.
 */
const RATE_LIMIT_SCRIPT = `
local key = KEYS[1]
local perMinute = tonumber(ARGV[1])
local perHour = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - 3600000)
local hour = redis.call('ZCARD', key)
local minute = hour - redis.call('ZCOUNT', key, '-inf', now - 60000)
local allowed = 0
local minuteFreeing = false
local hourFreeing = false
local function scoreAt(index)
  return redis.call('ZRANGE', key, index, index, 'WITHSCORES')[2]
end
if minute < perMinute and hour < perHour then
  allowed = 1
end
if allowed == 1 and ARGV[4] ~= '' then
  local at = now
  if hour > 0 then
    -- A clock that stepped back records at the newest time seen, as the in-process store does.
    local last = tonumber(scoreAt(-1))
    if last > at then at = last end
  end
  redis.call('ZADD', key, at, ARGV[4])
  redis.call('PEXPIRE', key, 3600000)
  hour = hour + 1
  minute = minute + 1
elseif allowed == 0 then
  if minute >= perMinute then minuteFreeing = scoreAt(hour - perMinute) end
  if hour >= perHour then hourFreeing = scoreAt(hour - perHour) end
end
local minuteOldest = false
local hourOldest = false
if minute > 0 then minuteOldest = scoreAt(hour - minute) end
if hour > 0 then hourOldest = scoreAt(0) end
return { allowed, now, hour, minute, minuteOldest, hourOldest, minuteFreeing, hourFreeing }
`;

type ConsumeReply = [
  allowed: number,
  now: number,
  hourCount: number,
  minuteCount: number,
  minuteOldest: string | null,
  hourOldest: string | null,
  minuteFreeing: string | null,
  hourFreeing: string | null,
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    cdapiRateLimit(
      key: string,
      perMinute: number,
      perHour: number,
      now: string,
      member: string,
    ): Result<ConsumeReply, Context>;
  }
}

export interface RateLimitLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface RedisRateLimitStoreOptions {
  url: string;
  /** Prepended to every key this store writes, so several deployments can share one Redis. */
  keyPrefix: string;
  /** A command that takes longer counts as Redis being unreachable. */
  commandTimeoutMs?: number;
  /** After a failure, how long requests use the per-instance fallback before Redis is tried again. */
  retryAfterFailureMs?: number;
  log: RateLimitLog;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DEFAULT_RETRY_AFTER_FAILURE_MS = 1000;

const optionalNumber = (value: string | null): number | null =>
  value === null ? null : Number(value);

/**
 * `RateLimitStore` shared by every instance through Redis: exact across instances because
 * each request is one Lua script, which Redis runs atomically.
 *
 * When Redis cannot be reached the service keeps answering: each instance falls back to its
 * own in-process limits, which hold the requests Redis granted it too (so N instances allow up
 * to N × the limit in a window, counting what was granted before the outage), logs one warning, and
 * `/readyz` reports `degraded`, also on an instance that no request comes to (see `beat`). Once
 * ioredis has reconnected (its own capped backoff), or a frozen Redis answers a PING again, the
 * store switches back and logs the recovery.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private readonly fallback = new MemoryRateLimitStore();
  private readonly keyPrefix: string;
  private readonly log: RateLimitLog;
  private readonly retryAfterFailureMs: number;
  /** Unique per process, so members written by different instances never collide. */
  private readonly instanceId = randomBytes(8).toString('base64url');
  private sequence = 0;
  private reachable = true;
  private skipRedisUntil = 0;
  /** PINGs Redis every `retryAfterFailureMs` (see `beat`). */
  private heartbeat: NodeJS.Timeout | null = null;
  private pinging = false;

  constructor(options: RedisRateLimitStoreOptions) {
    this.keyPrefix = options.keyPrefix;
    this.log = options.log;
    this.retryAfterFailureMs = options.retryAfterFailureMs ?? DEFAULT_RETRY_AFTER_FAILURE_MS;
    this.redis = new Redis(options.url, {
      // Fail at once while disconnected instead of queueing behind a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      lazyConnect: true,
    });
    this.redis.defineCommand('cdapiRateLimit', { numberOfKeys: 1, lua: RATE_LIMIT_SCRIPT });
    // Connection errors surface through `consume` and the reachability log; an unhandled
    // 'error' event would crash the process. A refused password is told as such: the
    // connection's own failure says only "Connection is closed", as for a Redis that is down.
    this.redis.on('error', (error: Error) => {
      if (refusedCredentials(error)) this.markUnreachable(error);
    });
    // Reconnected: `/readyz` and the fallback gauge say so at once, not at the next request
    // (an idle instance kept its alert firing), and the next request tries Redis again.
    this.redis.on('ready', () => {
      this.skipRedisUntil = 0;
      this.markReachable();
    });
  }

  /** Connects, waiting at most `timeoutMs`; the service starts degraded rather than not at all. */
  async connect(timeoutMs: number): Promise<void> {
    const connecting = this.redis.connect().then(
      async () => {
        try {
          await this.checkDatabase();
          this.markReachable();
        } catch (error) {
          if (error instanceof ConfigError) throw error;
          this.markUnreachable(error);
        }
      },
      (error: unknown) => this.markUnreachable(error),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.markUnreachable(new Error(`no connection within ${timeoutMs} ms`));
        resolve();
      }, timeoutMs);
    });
    try {
      await Promise.race([connecting, timeout]);
    } finally {
      clearTimeout(timer);
    }
    this.heartbeat ??= setInterval(() => this.beat(), this.retryAfterFailureMs).unref();
  }

  /**
   * A PING on the open connection, which tells `/readyz` and the fallback gauge how Redis is
   * without a request to find out (an idle or standby instance): that a frozen Redis, whose
   * connection stays open, answers no more (it said `ok` until a request timed out), and that
   * it answers again (no 'ready' event says so: the connection never closed). A closed
   * connection is ioredis's to reopen, and its 'ready' says so.
   */
  private beat(): void {
    if (this.redis.status !== 'ready' || this.pinging) return;
    this.pinging = true;
    this.redis
      .ping()
      .then(
        () => this.markReachable(),
        (error: unknown) => this.failed(error),
      )
      .finally(() => {
        this.pinging = false;
      });
  }

  /**
   * The database REDIS_URL names exists. When it does not, ioredis's SELECT fails at connect and
   * the connection stays on database 0, shared with whatever else uses it: a configuration
   * error, which stops the start (the client is closed).
   */
  private async checkDatabase(): Promise<void> {
    const database = this.redis.options.db ?? 0;
    if (database === 0) return;
    try {
      await this.redis.select(database);
    } catch (error) {
      const message = (error as Error).message;
      if (!/DB index is out of range/i.test(message)) throw error;
      this.redis.disconnect();
      throw new ConfigError(
        'REDIS_URL',
        `names database ${database}, which this Redis does not have (${message})`,
      );
    }
  }

  consume(keyId: string, limits: RateLimits, nowMs?: number): Promise<RateLimitDecision> {
    return this.step(keyId, limits, nowMs, true);
  }

  peek(keyId: string, limits: RateLimits, nowMs?: number): Promise<RateLimitDecision> {
    return this.step(keyId, limits, nowMs, false);
  }

  private async step(
    keyId: string,
    limits: RateLimits,
    nowMs: number | undefined,
    record: boolean,
  ): Promise<RateLimitDecision> {
    assertLimits(limits);
    if (nowMs !== undefined && !Number.isFinite(nowMs)) {
      throw new RangeError(`nowMs must be finite, got ${nowMs}`);
    }
    if (this.redis.status === 'ready' && Date.now() >= this.skipRedisUntil) {
      try {
        if (record) this.sequence += 1;
        const reply = await this.redis.cdapiRateLimit(
          `${this.keyPrefix}ratelimit:${keyId}`,
          limits.perMinute,
          limits.perHour,
          nowMs === undefined ? '' : String(nowMs),
          record ? `${this.instanceId}:${this.sequence}` : '',
        );
        this.markReachable();
        const decision = this.decision(reply, limits, nowMs);
        // The fallback holds what Redis granted this instance too, so an outage starts each
        // instance's own windows from its own share, not from empty: N instances allow N × the
        // limit in all, not N × on top of what was already used.
        if (record && decision.allowed) await this.fallback.consume(keyId, limits, nowMs);
        return decision;
      } catch (error) {
        this.failed(error);
      }
    } else {
      this.markUnreachable(new Error(`Redis connection is ${this.redis.status}`));
    }
    return record
      ? this.fallback.consume(keyId, limits, nowMs)
      : this.fallback.peek(keyId, limits, nowMs);
  }

  private decision(reply: ConsumeReply, limits: RateLimits, nowMs?: number): RateLimitDecision {
    const [allowed, serverNow, hourCount, minuteCount, minuteOldest, hourOldest, ...freeing] =
      reply;
    return decide(
      limits,
      nowMs ?? serverNow,
      allowed === 1,
      {
        count: minuteCount,
        oldestMs: optionalNumber(minuteOldest),
        freeingMs: optionalNumber(freeing[0]),
      },
      {
        count: hourCount,
        oldestMs: optionalNumber(hourOldest),
        freeingMs: optionalNumber(freeing[1]),
      },
    );
  }

  /** A command failed: requests use the fallback for `retryAfterFailureMs`. */
  private failed(error: unknown): void {
    this.markUnreachable(error);
    this.skipRedisUntil = Date.now() + this.retryAfterFailureMs;
  }

  private markReachable(): void {
    if (this.reachable) return;
    this.reachable = true;
    this.log.info({}, 'Redis reachable again: rate limits are shared across instances');
  }

  private markUnreachable(error: unknown): void {
    if (!this.reachable) return;
    this.reachable = false;
    this.log.warn(
      { err: withoutCommand(error) },
      refusedCredentials(error)
        ? 'Redis refused the credentials of REDIS_URL: rate limits fall back to per-instance counting until it accepts them'
        : 'Redis unreachable: rate limits fall back to per-instance counting until it returns',
    );
  }

  checks(): Record<string, 'ok' | 'unreachable'> {
    return { redis: this.reachable && this.redis.status === 'ready' ? 'ok' : 'unreachable' };
  }

  async close(): Promise<void> {
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.fallback.close();
    // quit() waits for replies in flight; disconnect() when the connection is already gone.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => {});
    this.redis.disconnect();
  }
}

/** Redis's answer to a password it does not take, or to none where it wants one. */
function refusedCredentials(error: unknown): boolean {
  return error instanceof Error && /^(WRONGPASS|NOAUTH)\b/.test(error.message);
}

/**
 * An ioredis error as it may be logged: a refused AUTH carries the command it answered,
 * `{ name: 'auth', args: [user, password] }`, which the log's error serializer would write out.
 * The message, the name, the code and the stack say what happened.
 */
function withoutCommand(error: unknown): unknown {
  if (!(error instanceof Error) || !('command' in error)) return error;
  const copy = new Error(error.message);
  copy.name = error.name;
  copy.stack = error.stack;
  const { code } = error as { code?: unknown };
  return code === undefined ? copy : Object.assign(copy, { code });
}
