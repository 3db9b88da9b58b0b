import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLockedOut, type WriteWithoutBlocking } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { findKeyForAuth, type KeyForAuth, recordKeyUse } from '../db/keys.queries.ts';
import { hashApiKey, isWellFormedApiKey } from '../keys/api-key.ts';
import type { Scope } from '../keys/scopes.ts';
import { rateLimitHeaders, windowHeaders } from '../ratelimit/headers.ts';
import type { RateLimitStore } from '../ratelimit/limiter.ts';
import { nowTimestamp } from '../time.ts';
import { companyInactive, insufficientScope, rateLimited, unauthenticated } from './errors.ts';

export interface AuthContext {
  keyId: number;
  keyName: string;
  scopes: string[];
  perMinute: number;
  perHour: number;
  company: { id: number; name: string; timezone: string };
  /** The time of this request, which /me reports as the key's last use. */
  usedAt: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** The scope a route needs; null for routes any valid key may call. */
    scope?: Scope | null;
  }
}

/**
 * Key lookups are cached for at most one second, so a revoked key or a deactivated company is
 * refused by every running instance within that time (docs/api.md promises 2 s) while a busy
 * key costs one query a second per instance. They read the primary, never a replica, so
 * replication lag cannot stretch that bound. The cache is bounded; the oldest entries go first.
 *
 * A key in use is read again in the second half of its second, while its requests are still
 * answered from the cache, so they do not wait for the lookup: on PostgreSQL the lookup waits
 * for a free connection of the pool, which heavy list queries may all hold (`/me` p99 42.8 ms
 * under the cold mix). Requests that find no entry share one lookup.
 */
const CACHE_TTL_MS = 1000;
const CACHE_MAX_ENTRIES = 10_000;
/**
 * Keys no row has (well-formed, so each cost a read) are cached apart, in fewer entries: a
 * client sending many made-up keys, which no rate limit counts as no key is known, evicts only
 * them, never a key in use.
 */
const UNKNOWN_CACHE_MAX_ENTRIES = 1_000;
/** last_used_at is written at most once a minute per key, so reads never queue behind writes. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
/**
 * A write that found SQLite's lock taken (an import in another process holds it for minutes) is
 * not waited for: the key's next request this long after tries again.
 */
const LAST_USED_RETRY_MS = 5_000;

export interface Authenticator {
  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Key look-ups answered from the cache, and from the database (for the metrics). */
  readonly keyCache: { readonly hits: number; readonly misses: number };
}

export function createAuthenticator(options: {
  /** The primary: key lookups and the last_used_at writes go here, not to a replica. */
  primaryDb: Db;
  /** The primary's writes (`DatabaseHandle.write`), tried once: last_used_at never waits. */
  writePrimary: WriteWithoutBlocking;
  limiter: RateLimitStore;
  onWriteError: (error: unknown) => void;
  /** The clock, in milliseconds (tests move it). */
  now?: () => number;
}): Authenticator {
  const clock = options.now ?? Date.now;
  type Entry = { key: KeyForAuth | null; expires: number };
  const cache = new Map<string, Entry>();
  const unknownKeys = new Map<string, Entry>();
  const reading = new Map<string, Promise<KeyForAuth | null>>();
  const lastWrites = new Map<number, number>();
  const keyCache = { hits: 0, misses: 0 };

  /** Reads the key and caches it until a second after the read began. */
  function read(hash: string, now: number): Promise<KeyForAuth | null> {
    let pending = reading.get(hash);
    if (pending === undefined) {
      pending = findKeyForAuth(options.primaryDb, hash)
        .then((key) => {
          cache.delete(hash);
          unknownKeys.delete(hash);
          const [entries, max] = key
            ? [cache, CACHE_MAX_ENTRIES]
            : [unknownKeys, UNKNOWN_CACHE_MAX_ENTRIES];
          if (entries.size >= max) entries.delete(entries.keys().next().value as string);
          entries.set(hash, { key, expires: now + CACHE_TTL_MS });
          return key;
        })
        .finally(() => reading.delete(hash));
      reading.set(hash, pending);
    }
    return pending;
  }

  async function lookup(hash: string, now: number): Promise<KeyForAuth | null> {
    const cached = cache.get(hash) ?? unknownKeys.get(hash);
    if (cached && cached.expires > now) {
      keyCache.hits += 1;
      // A failed early read leaves the entry to expire; the next request then reads it.
      if (cached.expires - now < CACHE_TTL_MS / 2) read(hash, now).catch(() => {});
      return cached.key;
    }
    keyCache.misses += 1;
    return read(hash, now);
  }

  function noteUse(keyId: number, now: number, usedAt: string): void {
    const last = lastWrites.get(keyId);
    if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    lastWrites.set(keyId, now);
    options
      .writePrimary((db) => recordKeyUse(db, keyId, usedAt), 0)
      .catch((error: unknown) => {
        if (isLockedOut(error)) {
          lastWrites.set(keyId, now - LAST_USED_WRITE_INTERVAL_MS + LAST_USED_RETRY_MS);
        } else {
          options.onWriteError(error);
        }
      });
  }

  return {
    keyCache,
    // Order (docs/api.md): 401 → 403 company_inactive → 429 → 403 insufficient_scope.
    async authenticate(request, reply) {
      const header = soleAuthorization(request);
      const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
      const presented = match?.[1];
      const now = clock();
      const key =
        presented && isWellFormedApiKey(presented)
          ? await lookup(hashApiKey(presented), now)
          : null;
      if (!key || key.revoked) {
        throw unauthenticated();
      }
      // Known from here on, so the request's log line names the company and the key (never
      // the key itself) whatever the answer: a 429 says who is hammering.
      request.auth = {
        keyId: key.keyId,
        keyName: key.keyName,
        scopes: key.scopes,
        perMinute: key.perMinute,
        perHour: key.perHour,
        company: { id: key.company.id, name: key.company.name, timezone: key.company.timezone },
        usedAt: nowTimestamp(),
      };
      const limits = { perMinute: key.perMinute, perHour: key.perHour };
      if (!key.company.active) {
        // Refused before the rate limit, so not counted; the key's windows are still told, as on
        // every answer to a known key.
        reply.headers(
          windowHeaders((await options.limiter.peek(String(key.keyId), limits)).windows),
        );
        throw companyInactive();
      }
      const decision = await options.limiter.consume(String(key.keyId), limits);
      reply.headers(rateLimitHeaders(decision));
      if (!decision.allowed) {
        throw rateLimited(decision.retryAfterSeconds ?? 1);
      }
      const scope = request.routeOptions.config.scope;
      if (scope && !key.scopes.includes(scope)) {
        throw insufficientScope(scope);
      }
      noteUse(key.keyId, now, request.auth.usedAt);
    },
  };
}

/**
 * The request's Authorization header when it carries exactly one: Node keeps the first of
 * several, and which credential was meant is unknown (a proxy may have added its own), so
 * several count as none.
 */
export function soleAuthorization(request: FastifyRequest): string | undefined {
  return headerLines(request.raw.rawHeaders, 'authorization') === 1
    ? request.headers.authorization
    : undefined;
}

/**
 * How many header lines named `name` (lower case) came (`rawHeaders` is name, value, name,
 * value…). Not Node's `headersDistinct`: the requests of `app.inject` do not have it.
 */
export function headerLines(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) count += 1;
  }
  return count;
}
