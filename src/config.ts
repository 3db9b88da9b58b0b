import { resolve } from 'node:path';
import { type AdminToken, adminToken } from './admin-tokens.ts';
import { ConfigError } from './config-error.ts';
import {
  parseBoolean,
  parseHost,
  parseInteger,
  parsePublicBaseUrl,
  parseRedisUrl,
} from './config-values.ts';
import {
  besideDatabase,
  type DatabaseTarget,
  DEFAULT_DATABASE_URL,
  parseDatabaseUrl,
  throughLinks,
} from './db/database-url.ts';
import { resolveSigningSecret } from './receipts/signing-secret.ts';

/** The only module that reads process.env. Every value is validated once and frozen. */

/** What every command needs: where the data and the receipt files live. */
export interface Config {
  readonly database: DatabaseTarget;
  /** `DATABASE_URL` as it was given; undefined when it was not, and the default applies. */
  readonly databaseUrl: string | undefined;
  /**
   * The receipt store: `RECEIPTS_DIR`, else a folder beside the SQLite file. Null when neither
   * names one (PostgreSQL or an in-memory SQLite without `RECEIPTS_DIR`): commands that touch
   * receipts ask for it through `requireReceiptsDir`, the others do not need it.
   */
  readonly receiptsDir: string | null;
  readonly logLevel: string;
  /** How long the change feed remembers deletions (imports forget older ones). */
  readonly changesRetentionDays: number;
  /**
   * `cdapi serve`: no API query runs longer, one that would answers 503. Every command: no
   * longer to open a connection to PostgreSQL.
   */
  readonly statementTimeoutMs: number;
}

/** What `cdapi serve` needs on top. */
export interface ServerConfig extends Config {
  readonly receiptsDir: string;
  /** Optional PostgreSQL replica that API reads go to; `database` keeps the writes. */
  readonly readDatabase: DatabaseTarget | null;
  readonly poolMax: number;
  readonly readPoolMax: number;
  readonly redisUrl: string | null;
  readonly redisKeyPrefix: string;
  /** Budget of the in-process response cache; 0 turns it off. */
  readonly responseCacheMb: number;
  readonly host: string;
  readonly port: number;
  /** Prometheus metrics on a listener of their own, on `host`; null = off. */
  readonly metricsPort: number | null;
  /** The admin API and panel on a listener of their own, on `host`; null = off. */
  readonly admin: AdminConfig | null;
  readonly publicBaseUrl: string | null;
  readonly signingSecret: string;
  readonly signedUrlTtlSeconds: number;
  readonly trustProxy: boolean;
  /** Slow clients: the request line and headers must arrive within this, or 408. */
  readonly headersTimeoutMs: number;
  /** …and the whole request (a body, if one is sent) within this. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** SQLite: threads that run the API's reads off the event loop; 0 runs them on it. */
  readonly sqliteReaders: number;
  /**
   * SQLite on Linux: how far the reader threads' nice value is raised above the process's own,
   * so the event loop comes first.
   */
  readonly sqliteReaderNice: number;
  /** Data requests served at once; more wait in a queue (see `admission.ts`). */
  readonly maxConcurrentRequests: number;
  /** Requests that may wait; one more is answered 503 at once. */
  readonly maxQueuedRequests: number;
  /** A request that has waited this long is answered 503. */
  readonly maxQueueWaitMs: number;
}

export interface AdminConfig {
  readonly port: number;
  /** `ADMIN_TOKEN`, then `ADMIN_TOKEN_PREVIOUS` while a rotation is under way. */
  readonly tokens: readonly AdminToken[];
  /**
   * `ADMIN_TRUST_PROXY`: the admin listener honours X-Forwarded-For (a proxy of the platform's
   * in front of it), apart from `TRUST_PROXY`, which is the public side's.
   */
  readonly trustProxy: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * RECEIPTS_DIR as an absolute path. White space at its ends is refused: a folder named ` ` (or
 * `/srv/receipts `) is a quoting mistake, which would put the store somewhere nobody looks. A
 * loop of links is told by name at start, before a signing secret is made (the store's first
 * use said only `ELOOP … stat`).
 */
function parseReceiptsDir(raw: string): string {
  if (raw.trim() !== raw) {
    throw new ConfigError('RECEIPTS_DIR', 'must not begin or end with white space');
  }
  throughLinks(resolve(raw), 'RECEIPTS_DIR');
  return resolve(raw);
}

/** The receipt store beside a SQLite file, refused as RECEIPTS_DIR is when it is a loop of links. */
function storeBesideDatabase(database: DatabaseTarget): string | null {
  const store = besideDatabase(database, 'receipts');
  if (store !== null) throughLinks(store, 'RECEIPTS_DIR');
  return store;
}

/** The receipt store of a command that reads or writes receipts; fails naming the variable. */
export function requireReceiptsDir(config: Config): string {
  if (config.receiptsDir !== null) return config.receiptsDir;
  throw new ConfigError(
    'RECEIPTS_DIR',
    config.database.dialect === 'postgres'
      ? 'is required when DATABASE_URL is PostgreSQL (the receipt store every instance and cdapi import share)'
      : 'is required with an in-memory SQLite database',
  );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const database = parseDatabaseUrl(env.DATABASE_URL || DEFAULT_DATABASE_URL);
  return Object.freeze({
    database,
    databaseUrl: env.DATABASE_URL || undefined,
    receiptsDir: env.RECEIPTS_DIR
      ? parseReceiptsDir(env.RECEIPTS_DIR)
      : storeBesideDatabase(database),
    logLevel,
    changesRetentionDays: parseInteger(
      'CHANGES_RETENTION_DAYS',
      env.CHANGES_RETENTION_DAYS || '30',
      0,
      36_500,
    ),
    statementTimeoutMs: parseInteger(
      'DATABASE_STATEMENT_TIMEOUT_MS',
      env.DATABASE_STATEMENT_TIMEOUT_MS || '10000',
      1,
      3_600_000,
    ),
  });
}

function parseReadDatabase(
  raw: string | undefined,
  primary: DatabaseTarget,
): DatabaseTarget | null {
  if (!raw) return null;
  const target = parseDatabaseUrl(raw, 'DATABASE_READ_URL');
  if (target.dialect !== 'postgres' || primary.dialect !== 'postgres') {
    throw new ConfigError(
      'DATABASE_READ_URL',
      'read replicas need PostgreSQL: both DATABASE_URL and DATABASE_READ_URL must be postgres:// URLs',
    );
  }
  return target;
}

/** `cdapi serve --host/--port`: they win over HOST and PORT. */
export interface ServerOverrides {
  host?: string;
  port?: number;
}

function parseMetricsPort(raw: string | undefined, port: number): number | null {
  if (!raw) return null;
  const metricsPort = parseInteger('METRICS_PORT', raw, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('METRICS_PORT', `must differ from the API's port (${port})`);
  }
  return metricsPort;
}

const ADMIN_TOKEN_VARIABLES = ['ADMIN_TOKEN', 'ADMIN_TOKEN_PREVIOUS'] as const;

/**
 * `ADMIN_PORT` turns the admin listener on, and then `ADMIN_TOKEN` is required. Only the
 * tokens' digests are kept; `forgetAdminTokens` removes the tokens from the environment. The
 * other admin variables are checked whenever they are set, the listener on or off: a bad value
 * would otherwise stop only the start that turns the listener on.
 */
function parseAdmin(env: NodeJS.ProcessEnv, taken: Array<[string, number | null]>) {
  const label = env.ADMIN_TOKEN_LABEL || 'admin';
  if (!/^[\w.@:-]{1,64}$/.test(label)) {
    throw new ConfigError('ADMIN_TOKEN_LABEL', 'must be 1 to 64 letters, digits or . _ @ : -');
  }
  const tokens = env.ADMIN_TOKEN ? [adminToken('ADMIN_TOKEN', env.ADMIN_TOKEN, label)] : [];
  if (env.ADMIN_TOKEN_PREVIOUS) {
    // The same token twice is a rotation that replaced nothing: the old token is still the one
    // in ADMIN_TOKEN, and the audit log would never show the previous one in use.
    if (env.ADMIN_TOKEN_PREVIOUS === env.ADMIN_TOKEN) {
      throw new ConfigError(
        'ADMIN_TOKEN_PREVIOUS',
        'is the same as ADMIN_TOKEN: while rotating, ADMIN_TOKEN is the new token and ADMIN_TOKEN_PREVIOUS the old one',
      );
    }
    tokens.push(adminToken('ADMIN_TOKEN_PREVIOUS', env.ADMIN_TOKEN_PREVIOUS, `${label}:previous`));
  }
  const trustProxy = parseBoolean('ADMIN_TRUST_PROXY', env.ADMIN_TRUST_PROXY || 'false');
  if (!env.ADMIN_PORT) return null;
  const port = parseInteger('ADMIN_PORT', env.ADMIN_PORT, 0, 65535);
  for (const [variable, other] of taken) {
    if (port !== 0 && port === other) {
      throw new ConfigError('ADMIN_PORT', `must differ from ${variable} (${other})`);
    }
  }
  if (!env.ADMIN_TOKEN) {
    throw new ConfigError('ADMIN_TOKEN', 'is required when ADMIN_PORT is set');
  }
  return Object.freeze({ port, tokens: Object.freeze(tokens), trustProxy });
}

/** After start-up: the admin tokens' digests are in the config, the tokens need not stay. */
export function forgetAdminTokens(env: NodeJS.ProcessEnv = process.env): void {
  for (const variable of ADMIN_TOKEN_VARIABLES) delete env[variable];
}

export function loadServerConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: ServerOverrides = {},
): ServerConfig {
  const base = loadConfig(env);
  // Checked even where `--port` overrides it: a bad value in the environment is a mistake
  // that would surface at the next start without the flag.
  const environmentPort = parseInteger('PORT', env.PORT || '8080', 0, 65535);
  const port = overrides.port ?? environmentPort;
  const environmentHost = parseHost(env.HOST || '127.0.0.1');
  const redisUrl = env.REDIS_URL ? parseRedisUrl(env.REDIS_URL) : null;
  const redisKeyPrefix = env.REDIS_KEY_PREFIX ?? 'cdapi:';
  if (!/^[\x21-\x7e]{0,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be at most 64 printable characters, no spaces');
  }
  const metricsPort = parseMetricsPort(env.METRICS_PORT, port);
  const poolMax = parseInteger('DATABASE_POOL_MAX', env.DATABASE_POOL_MAX || '10', 1, 1000);
  return Object.freeze({
    ...base,
    readDatabase: parseReadDatabase(env.DATABASE_READ_URL, base.database),
    poolMax,
    readPoolMax: env.DATABASE_READ_POOL_MAX
      ? parseInteger('DATABASE_READ_POOL_MAX', env.DATABASE_READ_POOL_MAX, 1, 1000)
      : poolMax,
    redisUrl,
    redisKeyPrefix,
    responseCacheMb: parseInteger('RESPONSE_CACHE_MB', env.RESPONSE_CACHE_MB || '16', 0, 4096),
    host: overrides.host ?? environmentHost,
    port,
    metricsPort,
    admin: parseAdmin(env, [
      ['PORT', port],
      ['METRICS_PORT', metricsPort],
    ]),
    publicBaseUrl: env.PUBLIC_BASE_URL ? parsePublicBaseUrl(env.PUBLIC_BASE_URL) : null,
    signingSecret: resolveSigningSecret(env.SIGNING_SECRET, base.database),
    signedUrlTtlSeconds: parseInteger(
      'SIGNED_URL_TTL_SECONDS',
      env.SIGNED_URL_TTL_SECONDS || '300',
      1,
      7 * 24 * 3600,
    ),
    trustProxy: parseBoolean('TRUST_PROXY', env.TRUST_PROXY || 'false'),
    ...parseHttpTimeouts(env),
    receiptsDir: requireReceiptsDir(base),
    sqliteReaders: parseInteger('SQLITE_READERS', env.SQLITE_READERS || '2', 0, 64),
    sqliteReaderNice: parseInteger('SQLITE_READER_NICE', env.SQLITE_READER_NICE || '10', 0, 19),
    ...parseAdmission(env),
  });
}

function parseAdmission(env: NodeJS.ProcessEnv) {
  return {
    maxConcurrentRequests: parseInteger(
      'MAX_CONCURRENT_REQUESTS',
      env.MAX_CONCURRENT_REQUESTS || '16',
      1,
      10_000,
    ),
    maxQueuedRequests: parseInteger(
      'MAX_QUEUED_REQUESTS',
      env.MAX_QUEUED_REQUESTS || '256',
      0,
      100_000,
    ),
    maxQueueWaitMs: parseInteger(
      'MAX_QUEUE_WAIT_MS',
      env.MAX_QUEUE_WAIT_MS || '1000',
      1,
      3_600_000,
    ),
  };
}

function parseHttpTimeouts(env: NodeJS.ProcessEnv) {
  const hour = 3_600_000;
  const headersTimeoutMs = parseInteger(
    'HTTP_HEADERS_TIMEOUT_MS',
    env.HTTP_HEADERS_TIMEOUT_MS || '10000',
    100,
    hour,
  );
  const requestTimeoutMs = parseInteger(
    'HTTP_REQUEST_TIMEOUT_MS',
    env.HTTP_REQUEST_TIMEOUT_MS || String(Math.max(30_000, headersTimeoutMs)),
    100,
    hour,
  );
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(
      'HTTP_REQUEST_TIMEOUT_MS',
      `must be at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  const keepAliveTimeoutMs = parseInteger(
    'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    env.HTTP_KEEP_ALIVE_TIMEOUT_MS || '72000',
    100,
    hour,
  );
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs };
}
