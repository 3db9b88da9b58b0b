import type { FastifyBaseLogger } from 'fastify';

/**
 * One log line per change the admin API makes: who (the token's label, never the token),
 * what, and the ids it touched. Never a raw key: a created key is named by its id and prefix.
 */
export function audit(
  log: FastifyBaseLogger,
  actor: string,
  action: string,
  ids: Record<string, unknown>,
): void {
  log.info({ audit: { actor, action, ...ids } }, `admin: ${action}`);
}
