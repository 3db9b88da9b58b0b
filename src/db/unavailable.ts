// Connection-level failures: the database is down, restarting or out of connections, a
// statement ran past its timeout, or the server did not answer at all (pg's query_timeout:
// "Query read timeout"), or the database was closed to new connections (ALLOW_CONNECTIONS
// false, SQLSTATE 55000, a code too broad to match on its own). The request may succeed later; it is not the client's fault.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  '57014', // query_canceled: statement timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
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
