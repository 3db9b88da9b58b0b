/** PostgreSQL's code for a statement cancelled by its statement timeout (query_canceled). */
export const POSTGRES_STATEMENT_TIMEOUT = '57014';

/** PostgreSQL's code for a transaction it ended to break a deadlock. */
export const POSTGRES_DEADLOCK = '40P01';

// Connection-level failures: the database is down, restarting or out of connections, a
// statement ran past its timeout, or the server did not answer at all (pg's query_timeout:
// "Query read timeout"), or the database was closed to new connections (ALLOW_CONNECTIONS
// false, SQLSTATE 55000, a code too broad to match on its own), or the database or the
// service's login is gone (dropped or renamed, a password rotated before the service's
// configuration) or its host unreachable. The request may succeed later; it is not the
// client's fault.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  POSTGRES_STATEMENT_TIMEOUT,
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '3D000', // invalid_catalog_name: the database does not exist
  '28000', // invalid_authorization_specification: no pg_hba.conf entry, or a role without LOGIN
  '28P01', // invalid_password
  '53100', // disk_full
  '53200', // out_of_memory
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return (
    typeof message === 'string' &&
    /Connection terminated|driver has already been destroyed|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|is not currently accepting connections/i.test(
      message,
    )
  );
}

/** Codes of a connection the database (or its host) refused: DATABASE_URL is the one to check. */
const REFUSED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  '3D000',
  '28000',
  '28P01',
]);

/**
 * The database refused to connect: nothing listens there, the host is unknown, or it refused
 * the login or the database name (a role that does not exist, none given, a wrong password).
 */
export function isConnectionRefused(error: unknown): boolean {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && REFUSED_CODES.has(code);
}

/**
 * The database answers but holds no table the query names: it was recreated or restored empty
 * (or to an older version) under the running service. Not the client's fault, and not for the
 * client to fix: 503 while an operator runs `cdapi migrate` or restores the data.
 */
export function isSchemaMissing(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '42P01' || code === '3F000') return true; // undefined_table, invalid_schema_name
  return code === 'SQLITE_ERROR' && typeof message === 'string' && /^no such table/.test(message);
}

/**
 * The database does not let the service's login read a table (PostgreSQL's insufficient_privilege): a
 * replica's read-only role without SELECT on a table (made by another role than the one its
 * default privileges cover). Not the client's fault: 503 while an operator grants it.
 */
export function isPermissionDenied(error: unknown): boolean {
  return (error as { code?: unknown }).code === '42501';
}
