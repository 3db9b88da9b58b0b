import { existsSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type Logger, pino } from 'pino';
import { buildAdminApp } from './admin/admin-app.ts';
import { buildApp } from './app.ts';
import type { ServerConfig } from './config.ts';
import { ConfigError } from './config-error.ts';
import { type DatabaseHandle, openDatabase } from './db/connect.ts';
import type { Db } from './db/database.ts';
import { ensureSchema } from './db/migrate.ts';
import { SchemaOutdatedError } from './db/schema-outdated-error.ts';
import { closeGracefully } from './http/closing.ts';
import { API_PREFIX } from './http/deps.ts';
import { warmUp } from './http/warm-up.ts';
import { closeMetricsListener, listenForMetrics } from './metrics/listener.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import type { RateLimitStore } from './ratelimit/limiter.ts';
import { MemoryRateLimitStore } from './ratelimit/memory-store.ts';
import { RedisRateLimitStore } from './ratelimit/redis-store.ts';
import { FileReceiptStore } from './receipts/fs-store.ts';

/**
 * A RECEIPTS_DIR that names a file, or a folder that cannot be read, stops the start (an import
 * of receipts stops on it too, and every receipt would fail).
 */
function refuseUnusableReceiptsDir(dir: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ConfigError('RECEIPTS_DIR', `cannot be read: ${(error as Error).message}`);
  }
  if (!isFolder) throw new ConfigError('RECEIPTS_DIR', `is not a folder: ${dir}`);
}

/**
 * A RECEIPTS_DIR that does not exist is most likely a wrong path when the database holds
 * receipts: every receipt would answer 404. It is said once at the start: a warning on a new
 * installation (no receipts yet, the first import makes the folder), an error when the database
 * already holds receipts. The service still starts.
 */
async function checkReceiptStore(config: ServerConfig, db: Db, logger: Logger): Promise<void> {
  if (existsSync(config.receiptsDir)) return;
  const held = await db
    .selectFrom('receipts')
    .select('expense_id')
    .limit(1)
    .executeTakeFirst()
    .catch(() => undefined);
  if (held) {
    logger.error(
      { receiptsDir: config.receiptsDir },
      'RECEIPTS_DIR does not exist yet, but the database holds receipts: every receipt image answers 404 until RECEIPTS_DIR names their folder',
    );
  } else {
    logger.warn(
      { receiptsDir: config.receiptsDir },
      'RECEIPTS_DIR does not exist yet: receipt images answer 404 until an import stores them there',
    );
  }
}

/**
 * A PUBLIC_BASE_URL whose path is not the API's own (`https://api.example.com`, the host alone)
 * is most likely a mistake: every link in a body and every receipt redirect would miss the
 * API. A proxy may serve the API under another prefix, so it is said, not refused.
 */
function warnOfForeignBaseUrl(config: ServerConfig, logger: Logger): void {
  if (config.publicBaseUrl === null) return;
  if (new URL(config.publicBaseUrl).pathname.replace(/\/+$/, '').endsWith(API_PREFIX)) return;
  logger.warn(
    { publicBaseUrl: config.publicBaseUrl },
    `PUBLIC_BASE_URL does not end in ${API_PREFIX}: links in bodies and receipt redirects are built under it, which is right only if a proxy serves the API there`,
  );
}

export interface RunningServer {
  app: FastifyInstance;
  /** The metrics listener, when METRICS_PORT is set. */
  metricsServer: Server | null;
  /** The admin listener (admin API and panel), when ADMIN_PORT is set. */
  adminApp: FastifyInstance | null;
  /** Stops accepting connections, lets in-flight requests finish, then closes the databases. */
  close(): Promise<void>;
}

/** Pino settings: JSON lines, and neither the Authorization header nor a key ever logged. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
  };
}

/**
 * A database that did not answer in time at start: pg's words ("Connection terminated due to
 * connection timeout", "canceling statement due to statement timeout") name neither the
 * setting nor its value, and a DATABASE_STATEMENT_TIMEOUT_MS of a few milliseconds stops the
 * service this way.
 */
function namingTheTimeout(error: unknown, timeoutMs: number): unknown {
  const message = error instanceof Error ? error.message : '';
  if (
    !/connection timeout|timeout exceeded when trying to connect|statement timeout|query read timeout/i.test(
      message,
    )
  ) {
    return error;
  }
  return new Error(
    `the database did not answer within DATABASE_STATEMENT_TIMEOUT_MS (${timeoutMs} ms), which bounds opening a connection and each statement: ${message}`,
    { cause: error },
  );
}

/** How long start-up waits for Redis before it serves with per-instance limits. */
const REDIS_CONNECT_TIMEOUT_MS = 3000;

/**
 * Opens the databases, builds the apps and listens. `hooks.listening` runs once every listener
 * is up (`cdapi serve --demo` seeds its company then, so a port in use leaves no company behind
 * whose key was never shown); its failure stops the server.
 */
export async function startServer(
  config: ServerConfig,
  hooks: { listening?: (database: DatabaseHandle) => Promise<void> } = {},
): Promise<RunningServer> {
  refuseUnusableReceiptsDir(config.receiptsDir);
  const logger = pino(loggerOptions(config.logLevel));
  const connection = { statementTimeoutMs: config.statementTimeoutMs, serialQueries: true };
  const primary = openDatabase(config.database, { ...connection, max: config.poolMax });
  const replica = config.readDatabase
    ? openDatabase(config.readDatabase, { ...connection, max: config.readPoolMax })
    : null;
  let limiter: RateLimitStore;
  if (config.redisUrl) {
    const redis = new RedisRateLimitStore({
      url: config.redisUrl,
      keyPrefix: config.redisKeyPrefix,
      log: logger,
    });
    await redis.connect(REDIS_CONNECT_TIMEOUT_MS);
    limiter = redis;
  } else {
    limiter = new MemoryRateLimitStore();
  }
  const closeResources = async () => {
    await limiter.close();
    await replica?.close();
    await primary.close();
  };
  try {
    await ensureSchema(primary);
    // A replica follows the primary's schema; checking it catches a URL that names another
    // database. Its failure names it: `cdapi migrate` (on the primary) cannot mend it.
    if (replica) {
      await ensureSchema(replica).catch((error: unknown) => {
        throw Object.assign(
          new Error(
            `DATABASE_READ_URL: the read replica ${error instanceof SchemaOutdatedError ? 'is behind the primary’s schema (it should follow the primary; is it another database?)' : 'cannot be used'}: ${(error as Error).message}`,
            { cause: error },
          ),
          { code: (error as NodeJS.ErrnoException).code },
        );
      });
    }
  } catch (error) {
    await closeResources();
    throw namingTheTimeout(error, config.statementTimeoutMs);
  }
  const metrics = config.metricsPort === null ? undefined : new ServiceMetrics();
  if (metrics) {
    metrics.trackPools(
      [
        { database: 'primary', handle: primary },
        { database: 'replica', handle: replica },
      ].flatMap(({ database, handle }) =>
        handle?.dialect === 'postgres' ? [{ database, pool: handle.pool }] : [],
      ),
    );
    if (config.redisUrl) metrics.trackRateLimitStore(limiter);
    metrics.trackImports(primary.db);
  }
  const app = await buildApp({
    config,
    database: replica ?? primary,
    primaryDatabase: primary,
    limiter,
    receipts: new FileReceiptStore(config.receiptsDir),
    logger,
    metrics,
  });
  const adminApp = config.admin
    ? await buildAdminApp({
        config,
        database: primary,
        receipts: new FileReceiptStore(config.receiptsDir),
        tokens: config.admin.tokens,
        logger,
        metrics,
      })
    : null;
  const closers = [app, adminApp].flatMap((listener) =>
    listener ? [{ listener, connections: closeGracefully(listener.server, config) }] : [],
  );
  let metricsServer: Server | null = null;
  // A listener that cannot start names the address and its settings, not just the system's
  // error (a HOST that does not resolve said "getaddrinfo ENOTFOUND", read as the database's).
  const listening = async <T>(port: number, variables: string, listen: () => Promise<T>) => {
    try {
      return await listen();
    } catch (error) {
      throw new Error(
        `cannot listen on ${config.host}:${port} (${variables}): ${(error as Error).message}`,
      );
    }
  };
  try {
    await warmUp(app, replica ?? primary);
    await listening(config.port, 'HOST, PORT', () =>
      app.listen({ host: config.host, port: config.port }),
    );
    if (metrics && config.metricsPort !== null) {
      const { metricsPort } = config;
      metricsServer = await listening(metricsPort, 'HOST, METRICS_PORT', () =>
        listenForMetrics(metrics, config.host, metricsPort, config),
      );
    }
    if (adminApp && config.admin) {
      const { port } = config.admin;
      await listening(port, 'HOST, ADMIN_PORT', () => adminApp.listen({ host: config.host, port }));
    }
  } catch (error) {
    await app.close();
    await adminApp?.close();
    if (metricsServer) await closeMetricsListener(metricsServer);
    await closeResources();
    throw error;
  }
  let closing: Promise<void> | null = null;
  const running: RunningServer = {
    app,
    metricsServer,
    adminApp,
    close() {
      closing ??= (async () => {
        await Promise.all(
          closers.map(({ listener, connections }) => connections.during(listener.close())),
        );
        if (metricsServer) await closeMetricsListener(metricsServer);
        await closeResources();
      })();
      return closing;
    },
  };
  try {
    await hooks.listening?.(primary);
    // After the hook: the demo company's import makes the folder.
    await checkReceiptStore(config, primary.db, logger);
    warnOfForeignBaseUrl(config, logger);
  } catch (error) {
    await running.close();
    throw namingTheTimeout(error, config.statementTimeoutMs);
  }
  return running;
}

/** http://HOST:PORT of a listener on this machine (a wildcard address shown as loopback). */
function localOrigin(host: string, server: Server): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** The API's address on this machine's listener. */
export function localApiUrl(config: ServerConfig, app: FastifyInstance): string {
  return `${localOrigin(config.host, app.server)}${API_PREFIX}`;
}

/** The API's address as clients call it: PUBLIC_BASE_URL, else the listener's. */
export function apiUrl(config: ServerConfig, app: FastifyInstance): string {
  return config.publicBaseUrl ?? localApiUrl(config, app);
}

/** The reference panel's address on the admin listener. */
export function adminUrl(config: ServerConfig, adminApp: FastifyInstance): string {
  return `${localOrigin(config.host, adminApp.server)}/admin`;
}

export function metricsUrl(config: ServerConfig, server: Server): string {
  return `${localOrigin(config.host, server)}/metrics`;
}
