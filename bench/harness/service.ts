import type { PreparedDatabase } from './database.ts';
import { runCli } from './processes.ts';

/** Fixed so runs are comparable; 40 characters, the service wants at least 32. */
const SIGNING_SECRET = 'cdapi-bench-signing-secret-0123456789abc';
/** High enough that the limiter counts every request but never refuses one. */
const KEY_LIMITS = ['--per-minute', '100000000', '--per-hour', '1000000000'];

/** Creates a key of the company with raised limits (`cdapi keys create`) and returns it. */
export async function createKey(
  database: PreparedDatabase,
  companyId: number,
  name: string,
): Promise<string> {
  const output = await runCli(
    ['keys', 'create', '--company', String(companyId), '--name', name, ...KEY_LIMITS, '--json'],
    database.env,
  );
  return (JSON.parse(output) as { key: string }).key;
}

/** The service for one pass: its own process, one instance, in-process rate limiting. */
export function serviceEnv(database: PreparedDatabase): NodeJS.ProcessEnv {
  return {
    ...database.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SIGNING_SECRET,
    REDIS_URL: '',
    DATABASE_READ_URL: '',
  };
}
