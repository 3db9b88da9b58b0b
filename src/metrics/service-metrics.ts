import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/database.ts';
import { readImportStats } from '../db/import-stats.queries.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { RateLimitStore } from '../ratelimit/limiter.ts';
import { VERSION } from '../version.ts';

/**
 * The service's Prometheus metrics (docs/production.md lists them). Per request only the
 * latency histogram is touched (one observation, a fraction of a microsecond); everything
 * else is either counted as a plain number by its owner (caches, the limiter) or read when
 * the metrics are scraped.
 */

/** Hits and misses, counted by a cache itself and read at scrape time. */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

/** A PostgreSQL pool's state, as pg.Pool reports it. */
type PoolState = Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount' | 'options'>;

/** Seconds; from a cached answer (well under a millisecond) to the statement timeout. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A scrape reads the import totals once for all five import metrics. */
const IMPORT_STATS_REUSE_MS = 1000;

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly adminRequests: Histogram<'method' | 'route' | 'status'>;
  private rateLimited = 0;
  private readonly databaseErrors = { unavailable: 0, failed: 0 };
  /** Refusals of Node's HTTP parser: their labels and count, by listener and status (`api 400`). */
  private readonly refusedRequests = new Map<string, [Record<string, string>, number]>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'cdapi_build_info',
      help: 'Always 1; the labels name the running version and Node.js.',
      labelNames: ['version', 'node'],
      registers: [this.registry],
    }).set({ version: VERSION, node: process.version }, 1);
    this.requests = this.requestHistogram(
      'cdapi_http_request_duration_seconds',
      'HTTP requests by method, route pattern and status, and how long they took (_count: requests).',
    );
    this.adminRequests = this.requestHistogram(
      'cdapi_admin_request_duration_seconds',
      'Admin listener (ADMIN_PORT) requests by method, route pattern and status, and how long they took (_count: requests).',
    );
    this.counterOf('cdapi_rate_limited_requests_total', 'Requests refused with 429.', () => [
      [{}, this.rateLimited],
    ]);
    this.counterOf(
      'cdapi_http_refused_requests_total',
      'Requests refused before their head was read (not HTTP, an unknown method, a head too large or too slow): in no request histogram.',
      () => [...this.refusedRequests.values()],
      ['listener', 'status'],
    );
    this.counterOf(
      'cdapi_db_query_errors_total',
      'Database errors that failed a request or a write: unavailable (answered 503) or failed.',
      () => Object.entries(this.databaseErrors).map(([kind, n]) => [{ kind }, n]),
      ['kind'],
    );
  }

  private requestHistogram(name: string, help: string) {
    return new Histogram({
      name,
      help,
      labelNames: ['method', 'route', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  /** One finished request (from the onResponse hook). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status }, seconds);
    if (status === 429) this.rateLimited += 1;
  }

  /** One finished request of the admin listener. */
  observeAdminRequest(method: string, route: string, status: number, seconds: number): void {
    this.adminRequests.observe({ method, route, status }, seconds);
  }

  /**
   * One request Node's HTTP parser refused before its head was read, answered with `status` on
   * the API's listener or the admin listener.
   */
  countRefusedRequest(listener: 'api' | 'admin', status: number): void {
    const key = `${listener} ${status}`;
    const [labels, count] = this.refusedRequests.get(key) ?? [{ listener, status: `${status}` }, 0];
    this.refusedRequests.set(key, [labels, count + 1]);
  }

  /** Counts an error if it came from the database. */
  countError(error: unknown): void {
    if (isDatabaseUnavailable(error)) this.databaseErrors.unavailable += 1;
    else if (error instanceof pg.DatabaseError || error instanceof SqliteDatabase.SqliteError) {
      this.databaseErrors.failed += 1;
    }
  }

  trackKeyCache(stats: CacheStats): void {
    this.cacheCounter(
      'cdapi_key_cache_lookups_total',
      'API key look-ups answered from the one-second key cache (hit) or the database (miss).',
      stats,
    );
  }

  trackResponseCache(stats: CacheStats & { readonly bytes: number }): void {
    this.cacheCounter(
      'cdapi_response_cache_lookups_total',
      'Cacheable requests answered from the response cache (hit) or by a query (miss).',
      stats,
    );
    new Gauge({
      name: 'cdapi_response_cache_bytes',
      help: 'Bytes the response cache holds (RESPONSE_CACHE_MB is its budget).',
      registers: [this.registry],
      collect() {
        this.set(stats.bytes);
      },
    });
  }

  /** PostgreSQL pools by role (`primary`, `replica`); SQLite has none. */
  /** The data requests being worked on and waiting (see src/http/admission.ts), read when scraped. */
  trackAdmission(admission: { readonly running: number; readonly queued: number }): void {
    new Gauge({
      name: 'cdapi_requests_in_progress',
      help: 'Data requests being worked on (working, at most MAX_CONCURRENT_REQUESTS) and waiting for their turn (queued).',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'working' }, admission.running);
        this.set({ state: 'queued' }, admission.queued);
      },
    });
  }

  trackPools(pools: Array<{ database: string; pool: PoolState }>): void {
    if (pools.length === 0) return;
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      read: (pool: PoolState) => Array<[Record<string, string>, number]>,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['database', ...labelNames],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const { database, pool } of pools) {
            for (const [labels, value] of read(pool)) this.set({ database, ...labels }, value);
          }
        },
      });
    gauge('cdapi_db_pool_connections', 'Pooled connections by state.', ['state'], (pool) => [
      [{ state: 'in_use' }, pool.totalCount - pool.idleCount],
      [{ state: 'idle' }, pool.idleCount],
    ]);
    gauge(
      'cdapi_db_pool_waiting_requests',
      'Queries waiting for a pooled connection.',
      [],
      (pool) => [[{}, pool.waitingCount]],
    );
    gauge('cdapi_db_pool_max_connections', 'The pool size.', [], (pool) => [
      [{}, pool.options.max],
    ]);
  }

  /** With REDIS_URL: 1 while rate limits fall back to per-instance counting. */
  trackRateLimitStore(limiter: RateLimitStore): void {
    new Gauge({
      name: 'cdapi_redis_fallback',
      help: '1 while Redis is unreachable and rate limits are counted per instance, else 0.',
      registers: [this.registry],
      collect() {
        this.set(limiter.checks().redis === 'ok' ? 0 : 1);
      },
    });
  }

  /** `cdapi import` runs, read from the database they write their totals to. */
  trackImports(db: Db): void {
    let read: { at: number; rows: ReturnType<typeof readImportStats> } | null = null;
    const stats = () => {
      const now = Date.now();
      if (!read || now - read.at > IMPORT_STATS_REUSE_MS) {
        read = { at: now, rows: readImportStats(db) };
        read.rows.catch(() => {});
      }
      return read.rows;
    };
    type Row = Awaited<ReturnType<typeof readImportStats>>[number];
    const metric = (
      kind: 'counter' | 'gauge',
      name: string,
      help: string,
      value: (row: Row) => number | null,
      labelled = true,
    ) => {
      const Metric = kind === 'counter' ? Counter : Gauge;
      new Metric({
        name,
        help,
        labelNames: labelled ? ['outcome'] : [],
        registers: [this.registry],
        async collect() {
          // Unreachable database: the last values read stay, the scrape still answers.
          const rows = await stats().catch(() => null);
          if (!rows) return;
          this.reset();
          for (const row of rows) {
            const n = value(row);
            if (n === null || (!labelled && row.outcome !== 'succeeded')) continue;
            const labels = labelled ? { outcome: row.outcome } : {};
            if (this instanceof Counter) this.inc(labels, n);
            else (this as Gauge).set(labels, n);
          }
        },
      });
    };
    metric('counter', 'cdapi_import_runs_total', 'cdapi import runs by outcome.', (r) => r.runs);
    metric(
      'counter',
      'cdapi_import_seconds_total',
      'Time cdapi import runs took, by outcome.',
      (r) => r.duration_ms / 1000,
    );
    metric(
      'counter',
      'cdapi_import_records_total',
      'Records imported by successful runs.',
      (r) => r.records,
      false,
    );
    metric(
      'gauge',
      'cdapi_import_last_duration_seconds',
      'How long the latest run of each outcome took.',
      (r) => (r.last_duration_ms === null ? null : r.last_duration_ms / 1000),
    );
    metric(
      'gauge',
      'cdapi_import_last_finished_timestamp_seconds',
      'When the latest run of each outcome ended (Unix time).',
      (r) => (r.last_finished_ms === null ? null : r.last_finished_ms / 1000),
    );
  }

  /** The metrics in Prometheus's text format. */
  async scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private counterOf(
    name: string,
    help: string,
    values: () => Array<[Record<string, string>, number]>,
    labelNames: string[] = [],
  ): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of values()) this.inc(labels, value);
      },
    });
  }

  private cacheCounter(name: string, help: string, stats: CacheStats): void {
    this.counterOf(
      name,
      help,
      () => [
        [{ result: 'hit' }, stats.hits],
        [{ result: 'miss' }, stats.misses],
      ],
      ['result'],
    );
  }
}
