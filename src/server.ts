import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { ServerConfig } from './config.ts';
import { type DatabaseHandle, openDatabase } from './db/connect.ts';
import { ensureSchema } from './db/migrate.ts';
import { API_PREFIX } from './http/routes/index.ts';
import { MemoryRateLimitStore } from './ratelimit/memory-store.ts';
import { FileReceiptStore } from './receipts/fs-store.ts';

export interface RunningServer {
  app: FastifyInstance;
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

/** Pino settings: JSON lines, and neither the Authorization header nor a key ever logged. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
  };
}

export async function startServer(
  config: ServerConfig,
  hooks: { beforeListen?: (database: DatabaseHandle) => Promise<void> } = {},
): Promise<RunningServer> {
  const database = openDatabase(config.database);
  const limiter = new MemoryRateLimitStore();
  try {
    await ensureSchema(database);
    await hooks.beforeListen?.(database);
  } catch (error) {
    await database.close();
    await limiter.close();
    throw error;
  }
  const app = await buildApp({
    config,
    database,
    limiter,
    receipts: new FileReceiptStore(config.receiptsDir),
    logger: loggerOptions(config.logLevel),
  });
  await app.listen({ host: config.host, port: config.port });
  let closing: Promise<void> | null = null;
  return {
    app,
    close() {
      closing ??= (async () => {
        await app.close();
        await limiter.close();
        await database.close();
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
