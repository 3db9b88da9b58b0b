import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.ts';
import type { ServerConfig } from './config.ts';
import { type DatabaseHandle, openDatabase } from './db/connect.ts';
import { ensureSchema } from './db/migrate.ts';
import { API_PREFIX } from './http/routes/index.ts';
import type { RateLimitStore } from './ratelimit/limiter.ts';
import { MemoryRateLimitStore } from './ratelimit/memory-store.ts';
import { RedisRateLimitStore } from './ratelimit/redis-store.ts';
import { FileReceiptStore } from './receipts/fs-store.ts';

export interface RunningServer {
  app: FastifyInstance;
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

/** How long start-up waits for Redis before it serves with per-instance limits. */
const REDIS_CONNECT_TIMEOUT_MS = 3000;

export async function startServer(
  config: ServerConfig,
  hooks: { beforeListen?: (database: DatabaseHandle) => Promise<void> } = {},
): Promise<RunningServer> {
  const logger = pino(loggerOptions(config.logLevel));
  const connection = { statementTimeoutMs: config.statementTimeoutMs };
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
    // A replica follows the primary's schema; checking it catches a URL that names another database.
    if (replica) await ensureSchema(replica);
    await hooks.beforeListen?.(primary);
  } catch (error) {
    await closeResources();
    throw error;
  }
  const app = await buildApp({
    config,
    database: replica ?? primary,
    primaryDatabase: primary,
    limiter,
    receipts: new FileReceiptStore(config.receiptsDir),
    logger,
  });
  await app.listen({ host: config.host, port: config.port });
  let closing: Promise<void> | null = null;
  return {
    app,
    close() {
      closing ??= (async () => {
        // server.close() only closes the connections idle at that moment; one whose response
        // was already being written turns idle later and would hold the exit for the whole
        // keep-alive timeout.
        const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
        try {
          await app.close();
        } finally {
          clearInterval(reaper);
        }
        await closeResources();
      })();
      return closing;
    },
  };
}

export function apiUrl(config: ServerConfig, app: FastifyInstance): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${API_PREFIX}`;
}
