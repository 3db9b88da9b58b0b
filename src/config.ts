import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  linkSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { makeDirectorySync } from './directories.ts';

/** The only module that reads process.env. Every value is validated once and frozen. */

export type DatabaseTarget =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'postgres'; url: string };

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

/**
 * A token the admin API accepts: its SHA-256 digest (never the token), its length (to find it
 * inside a longer text, such as a request id) and its audit label.
 */
export interface AdminToken {
  readonly label: string;
  readonly sha256: Buffer;
  readonly length: number;
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

export class ConfigError extends Error {
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.variable = variable;
    this.name = 'ConfigError';
  }
}

const DEFAULT_DATABASE_FILE = 'company-data.db';
export const DEFAULT_DATABASE_URL = `sqlite:./data/${DEFAULT_DATABASE_FILE}`;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseDatabaseUrl(value: string, variable = 'DATABASE_URL'): DatabaseTarget {
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path.trim() === '')
      throw new ConfigError(
        variable,
        'sqlite: needs a file path, e.g. sqlite:./data/company-data.db',
      );
    // A path ending in a separator names a folder; resolved, it would name a file of its name.
    if (path.endsWith('/') || path.endsWith(sep)) {
      throw new ConfigError(
        variable,
        `${path} names a folder: give the database file's path, e.g. sqlite:${path}company-data.db`,
      );
    }
    // SQLite's URI options would be read as part of the file's name (`a.db?mode=ro`).
    if (path.includes('?')) {
      throw new ConfigError(
        variable,
        `sqlite: takes a file path alone, without options (?…): ${path.slice(0, path.indexOf('?'))}`,
      );
    }
    if (path === ':memory:') return { dialect: 'sqlite', path };
    // A loop of links is told here, by name, before anything is made beside the file (SQLite
    // would say only `unable to open database file`).
    throughLinks(resolve(path), variable);
    return { dialect: 'sqlite', path: resolve(path) };
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(
        variable,
        'is not a valid postgres:// URL (a password holding /, #, ? or @ is percent-encoded: %2F, %23, %3F, %40)',
      );
    }
    return { dialect: 'postgres', url: value };
  }
  throw new ConfigError(variable, 'must start with sqlite:, postgres:// or postgresql://');
}

/** A host name or an IP address to listen on (`HOST`, `cdapi serve --host`). */
export const isListenHost = (value: string): boolean => /^[\w.:-]{1,253}$/.test(value);

function parseHost(raw: string): string {
  if (!isListenHost(raw)) throw new ConfigError('HOST', 'must be a host name or an IP address');
  return raw;
}

function parseInteger(variable: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(variable, `must be a whole number, got "${raw}"`);
  // Written as the number is (`05` might be read as octal by other tools, as `METRICS_PORT=05`
  // opened port 5), like the CLI's ids and counts.
  if (/^0\d/.test(raw)) {
    throw new ConfigError(variable, `must be written without leading zeros, got "${raw}"`);
  }
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(variable, `must be between ${min} and ${max}`);
  return value;
}

function parseBoolean(variable: string, raw: string): boolean {
  const value = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(
    variable,
    `must be true or false (1 or 0, yes or no, in any case), got "${raw}"`,
  );
}

function parsePublicBaseUrl(raw: string): string {
  // The URL parser would drop white space at the ends and encode it inside; the text given
  // is what an operator reads in the start-up line, so it is refused instead.
  if (/[\s\p{Cc}]/u.test(raw)) {
    throw new ConfigError('PUBLIC_BASE_URL', 'must not contain white space or control characters');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_BASE_URL', 'is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('PUBLIC_BASE_URL', 'must be an http:// or https:// URL');
  }
  // Paths are appended to it, and it is written into every body that links a receipt.
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError('PUBLIC_BASE_URL', 'must not carry a user name or password');
  }
  if (raw.includes('?') || raw.includes('#')) {
    throw new ConfigError('PUBLIC_BASE_URL', 'must not carry a query (?) or a fragment (#)');
  }
  // As the parser writes it (`http:/x` is `http://x/`, `"` and `<` are percent-encoded), so
  // every URL built on it is one.
  return url.href.replace(/\/+$/, '');
}

/** A Redis URL ioredis reads as meant: a host, a port of 1–65535, a database number. */
function parseRedisUrl(raw: string): string {
  if (!/^rediss?:\/\//.test(raw)) {
    throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(
      'REDIS_URL',
      'is not a valid URL (redis://[user:password@]host[:port][/database], port 1–65535)',
    );
  }
  if (url.hostname === '') throw new ConfigError('REDIS_URL', 'must name a host');
  if (!/^(\/\d{0,5})?$/.test(url.pathname)) {
    throw new ConfigError(
      'REDIS_URL',
      'may end with a database number only (redis://host:6379/0), nothing else after the host',
    );
  }
  return raw;
}

const SIGNING_SECRET_MIN = 32;

/**
 * SQLite keeps a generated secret beside its file (`besideDatabase`), so signed URLs survive
 * restarts and every process of that database, wherever it was started, signs alike; an
 * in-memory database, which lives as long as its process, gets one of its own. With
 * PostgreSQL several instances must share one secret, so it has to be given.
 */
function resolveSigningSecret(raw: string | undefined, database: DatabaseTarget): string {
  if (raw !== undefined && raw !== '') {
    if (raw.trim().length < SIGNING_SECRET_MIN) {
      throw new ConfigError(
        'SIGNING_SECRET',
        `must be at least ${SIGNING_SECRET_MIN} characters, white space at its ends not counted`,
      );
    }
    return raw;
  }
  if (database.dialect === 'postgres') {
    throw new ConfigError('SIGNING_SECRET', 'is required when DATABASE_URL is PostgreSQL');
  }
  const file = besideDatabase(database, 'signing-secret');
  if (file === null) return randomBytes(32).toString('base64url');
  let secret: string;
  try {
    secret = existsSync(file) ? readFileSync(file, 'utf8').trim() : makeSecretFile(file);
  } catch (error) {
    throw new ConfigError(
      'SIGNING_SECRET',
      `is not set, and the secret kept beside the SQLite database (DATABASE_URL) cannot be read or made at ${file}: ${(error as Error).message}`,
    );
  }
  // An emptied or cut file would sign with a key anyone can guess: refused, as a short
  // SIGNING_SECRET is.
  if (secret.length < SIGNING_SECRET_MIN) {
    throw new ConfigError(
      'SIGNING_SECRET',
      `is not set, and the secret kept at ${file} is shorter than ${SIGNING_SECRET_MIN} characters: remove the file to have a new one made (signed URLs handed out before stop working), or set SIGNING_SECRET`,
    );
  }
  return secret;
}

/**
 * A new secret in `file`, written whole before the file appears (a temporary file linked into
 * place), so a process starting at the same time reads all of it or makes none: when another
 * was first, its secret is the one taken.
 */
function makeSecretFile(file: string): string {
  makeDirectorySync(dirname(file));
  const secret = randomBytes(32).toString('base64url');
  const written = `${file}.${process.pid}.tmp`;
  writeFileSync(written, `${secret}\n`, { mode: 0o600 });
  try {
    try {
      linkSync(written, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
      // A file system without hard links: created in place, as the next best.
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    }
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFileSync(file, 'utf8').trim();
  } finally {
    rmSync(written, { force: true });
  }
}

/**
 * What a SQLite database file keeps beside it (its receipt store, its signing secret), so a
 * scratch database never writes into (or deletes from) another database's: `name` beside
 * `company-data.db` (the default database, hence `./data/receipts`, `./data/signing-secret`),
 * `NAME-name` beside any other `NAME.db`. Null for PostgreSQL, which has no file to put it
 * beside (instances and `cdapi import` must name the store and the secret they share), and for
 * an in-memory database.
 */
function besideDatabase(database: DatabaseTarget, name: string): string | null {
  if (database.dialect !== 'sqlite' || database.path === ':memory:') return null;
  const path = throughLinks(database.path);
  const file = basename(path);
  const stem = file.slice(0, file.length - extname(file).length) || file;
  return join(dirname(path), file === DEFAULT_DATABASE_FILE ? name : `${stem}-${name}`);
}

/**
 * The file a path names once its symbolic links are followed, so a database reached through a
 * link keeps its store and secret beside the file itself, as every other path to it does; a
 * link to a file not made yet leads to the name SQLite will make.
 */
function throughLinks(path: string, variable = 'DATABASE_URL'): string {
  try {
    return realpathSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw linkLoop(path, variable);
    // Not there yet: follow the links that are (at most 40, as the system does).
    let current = resolve(path);
    for (let hops = 0; hops < 40; hops += 1) {
      try {
        current = resolve(dirname(current), readlinkSync(current));
      } catch {
        return current;
      }
    }
    throw linkLoop(path, variable);
  }
}

function linkLoop(path: string, variable: string): ConfigError {
  return new ConfigError(
    variable,
    `${path} is a loop of symbolic links (or a chain of more than 40)`,
  );
}

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

/** At least this long: 32 characters of `openssl rand -base64 32`'s 44 are 190 bits. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;
/** At most this long: the longest bearer token the admin listener reads (src/admin/auth.ts). */
export const ADMIN_TOKEN_MAX_LENGTH = 512;
const ADMIN_TOKEN_VARIABLES = ['ADMIN_TOKEN', 'ADMIN_TOKEN_PREVIOUS'] as const;

function adminToken(variable: string, raw: string, label: string): AdminToken {
  if (
    raw.length < ADMIN_TOKEN_MIN_LENGTH ||
    raw.length > ADMIN_TOKEN_MAX_LENGTH ||
    !/^[\x21-\x7e]+$/.test(raw)
  ) {
    throw new ConfigError(
      variable,
      `must be ${ADMIN_TOKEN_MIN_LENGTH} to ${ADMIN_TOKEN_MAX_LENGTH} printable characters without spaces (e.g. openssl rand -base64 32)`,
    );
  }
  return Object.freeze({
    label,
    sha256: createHash('sha256').update(raw).digest(),
    length: raw.length,
  });
}

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
