import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { InjectOptions } from 'light-my-request';
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import type { ServerConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { insertApiKey } from '../../src/db/keys.queries.ts';
import { closeGracefully } from '../../src/http/closing.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { type ImportOptions, importFile } from '../../src/import/importer.ts';
import type { ImportSummary } from '../../src/import/session.ts';
import { DISPLAY_PREFIX_LENGTH, generateApiKey } from '../../src/keys/api-key.ts';
import { SCOPES } from '../../src/keys/scopes.ts';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { loggerOptions } from '../../src/server.ts';
import { type ContractChecker, createContractChecker } from './contract.ts';
import { type TestDatabase, useDatabase, useTempDir } from './databases.ts';
import { leaksIn, NO_LEAKS } from './log-leaks.ts';
import { canaries, writeNdjson } from './records.ts';

/** Paths served outside the API prefix; every other path is taken as relative to it. */
const OUTSIDE_API = /^\/(healthz|readyz|docs)\b/;

/** The URL of `path`: as it is under the API prefix or outside the API, else under the prefix. */
export const apiUrl = (path: string): string =>
  path.startsWith(API_PREFIX) || OUTSIDE_API.test(path) ? path : `${API_PREFIX}${path}`;

export interface KeyOptions {
  scopes?: string[];
  perMinute?: number;
  perHour?: number;
  name?: string;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read JSON bodies freely.
  json: any;
}

export interface TestApi extends TestDatabase {
  app: FastifyInstance;
  config: ServerConfig;
  dir: string;
  /** Imports records in the format of docs/import-format.md (receipt paths relative to `dir`). */
  load(records: unknown[], options?: ImportOptions): Promise<ImportSummary>;
  createKey(companyId: number, options?: KeyOptions): Promise<string>;
  /** GET (or another method) on a path under the API prefix, with the key as Bearer token. */
  get(
    path: string,
    key?: string | null,
    options?: Omit<InjectOptions, 'url' | 'path'>,
  ): Promise<ApiResponse>;
  /** What the app has logged so far, one parsed JSON line each. */
  logLines(): Array<Record<string, unknown>>;
}

export function testServerConfig(
  database: TestDatabase,
  dir: string,
  overrides: Partial<ServerConfig> = {},
): ServerConfig {
  return {
    database: database.target,
    databaseUrl: undefined,
    receiptsDir: join(dir, 'receipts'),
    logLevel: 'silent',
    changesRetentionDays: 30,
    readDatabase: null,
    poolMax: 10,
    readPoolMax: 10,
    statementTimeoutMs: 10_000,
    redisUrl: null,
    redisKeyPrefix: 'cdapi:',
    responseCacheMb: 64,
    host: '127.0.0.1',
    port: 0,
    metricsPort: null,
    admin: null,
    publicBaseUrl: null,
    signingSecret: 'test-signing-secret-0123456789abcdef',
    signedUrlTtlSeconds: 300,
    trustProxy: false,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 72_000,
    sqliteReaders: 2,
    sqliteReaderNice: 10,
    maxConcurrentRequests: 16,
    maxQueuedRequests: 256,
    maxQueueWaitMs: 10_000,
    ...overrides,
  };
}

/** One checker per text of the document (it only changes with the config), for the process. */
const checkers = new Map<string, ContractChecker>();

async function contractOf(app: FastifyInstance): Promise<ContractChecker> {
  const res = await app.inject(`${API_PREFIX}/openapi.json`);
  if (res.statusCode !== 200)
    throw new Error(`GET ${API_PREFIX}/openapi.json answered ${res.statusCode}: ${res.body}`);
  let checker = checkers.get(res.body);
  if (!checker) {
    checker = createContractChecker(JSON.parse(res.body));
    checkers.set(res.body, checker);
  }
  return checker;
}

/** Responses listed in full when a test ends with some that do not conform. */
const MAX_LISTED = 10;

/** A signed receipt URL's signature, wherever a URL appears (a Location header, a body). */
const SIGNATURE = /signature=([A-Za-z0-9_-]{20,})/g;

/**
 * The app's log, at the most verbose level, through the production logger settings (redaction
 * included), kept in memory so the test can search it.
 */
function capturedLogger() {
  const lines: string[] = [];
  const logger = pino(loggerOptions('trace'), {
    write: (line: string) => {
      lines.push(line);
    },
  });
  return { logger, lines };
}

/**
 * A fresh database with the app built over it. Every response `get` receives is checked, when
 * the test ends, for the canary values the record factories put in sensitive fields, and
 * against the OpenAPI document the app serves (status, Content-Type, body schema, headers).
 * The app logs at trace level; when the test ends the log must hold no API key the test
 * created, no signature of a signed URL the app handed out, no signing secret and no canary.
 */
export async function useApi(
  t: TestContext,
  dialect: Dialect,
  options: { records?: unknown[]; config?: Partial<ServerConfig> } = {},
): Promise<TestApi> {
  const database = await useDatabase(t, dialect);
  const dir = useTempDir(t);
  const config = testServerConfig(database, dir, options.config);
  const limiter = new MemoryRateLimitStore();
  const receipts = new FileReceiptStore(config.receiptsDir);
  const log = capturedLogger();
  const app = await buildApp({
    config,
    database: database.handle,
    limiter,
    receipts,
    logger: log.logger,
  });
  // Closed as `cdapi serve` closes it (src/http/closing.ts): a connection whose answer was
  // still leaving when close() began (a receipt file the client has read whole) turns idle a
  // moment later, and held the close for the client's keep-alive (35 s).
  const connections = closeGracefully(app.server, config);
  const bodies: string[] = [];
  const secrets = new Set<string>([config.signingSecret]);
  // Redirects to signed URLs, over app.inject or real HTTP alike.
  app.addHook('onResponse', async (_request, reply) => {
    const location = reply.getHeader('location');
    if (location) bodies.push(String(location));
  });
  const nonconforming: string[] = [];
  let contract: Promise<ContractChecker> | null = null;
  t.after(async () => {
    await connections.during(app.close());
    await limiter.close();
    const failures: string[] = [];
    for (const body of bodies)
      for (const match of body.matchAll(SIGNATURE)) secrets.add(match[1] as string);
    const logged = leaksIn(log.lines.join(''), secrets);
    if (logged.secrets.length > 0 || logged.canaries.length > 0) {
      const line = log.lines.find((l) => !isDeepStrictEqual(leaksIn(l, secrets), NO_LEAKS));
      failures.push(
        `the log holds ${logged.secrets.length} secret(s) and canaries [${logged.canaries.join(', ')}], e.g. in: ${line}`,
      );
    }
    const leaked = bodies.flatMap(canaries);
    if (leaked.length > 0)
      failures.push(`a response contained sensitive canary values: ${leaked.join(', ')}`);
    if (nonconforming.length > 0) {
      const listed = nonconforming.slice(0, MAX_LISTED);
      if (nonconforming.length > MAX_LISTED)
        listed.push(`…and ${nonconforming.length - MAX_LISTED} more`);
      failures.push(
        `${nonconforming.length} response(s) did not conform to the OpenAPI document:\n${listed.join('\n')}`,
      );
    }
    if (failures.length > 0) throw new Error(failures.join('\n'));
  });

  let files = 0;
  const api: TestApi = {
    ...database,
    app,
    config,
    dir,
    logLines: () => log.lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    async load(records, importOptions) {
      files += 1;
      return importFile(
        database.handle,
        receipts,
        writeNdjson(dir, records, `import-${files}.ndjson`),
        importOptions,
      );
    },
    async createKey(companyId, keyOptions = {}) {
      const generated = generateApiKey();
      await insertApiKey(database.handle.db, {
        companyId,
        name: keyOptions.name ?? 'test',
        prefix: generated.prefix,
        hash: generated.hash,
        scopes: keyOptions.scopes ?? [...SCOPES],
        perMinute: keyOptions.perMinute ?? 1_000_000,
        perHour: keyOptions.perHour ?? 1_000_000,
      });
      // The full key, and the part that is never shown (past what `keys list` displays).
      secrets.add(generated.key).add(generated.key.slice(DISPLAY_PREFIX_LENGTH));
      return generated.key;
    },
    async get(path, key, injectOptions = {}) {
      const headers = { ...(injectOptions.headers ?? {}) } as Record<string, string>;
      if (key) headers.authorization = `Bearer ${key}`;
      const url = apiUrl(path);
      const response = await app.inject({ method: 'GET', ...injectOptions, url, headers });
      bodies.push(response.body);
      const method = String(injectOptions.method ?? 'GET').toUpperCase();
      contract ??= contractOf(app);
      const problems = (await contract).check({
        method,
        path: url,
        status: response.statusCode,
        headers: response.headers,
        body: response.rawPayload,
      });
      if (problems.length > 0)
        nonconforming.push(
          `  ${method} ${url} → ${response.statusCode}\n${problems.map((p) => `    ${p}`).join('\n')}`,
        );
      let json: unknown;
      try {
        json = response.body ? JSON.parse(response.body) : undefined;
      } catch {
        json = undefined;
      }
      return { status: response.statusCode, headers: response.headers, body: response.body, json };
    },
  };
  if (options.records) await api.load(options.records);
  return api;
}
