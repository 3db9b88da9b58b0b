import { ConfigError } from './config-error.ts';

/**
 * How the text of one environment variable is read: whole numbers, booleans, a host to listen
 * on, the public base URL, a Redis URL. Each refusal names the variable.
 */

/** A host name or an IP address to listen on (`HOST`, `cdapi serve --host`). */
export const isListenHost = (value: string): boolean => /^[\w.:-]{1,253}$/.test(value);

export function parseHost(raw: string): string {
  if (!isListenHost(raw)) throw new ConfigError('HOST', 'must be a host name or an IP address');
  return raw;
}

export function parseInteger(variable: string, raw: string, min: number, max: number): number {
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

export function parseBoolean(variable: string, raw: string): boolean {
  const value = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(
    variable,
    `must be true or false (1 or 0, yes or no, in any case), got "${raw}"`,
  );
}

export function parsePublicBaseUrl(raw: string): string {
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
export function parseRedisUrl(raw: string): string {
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
