import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DatabaseHandle } from '../../db/connect.ts';
import { holdsCurrentSchema, unreadableTables } from '../../db/migrate.ts';
import { isSchemaMissing } from '../../db/unavailable.ts';
import type { RateLimitStore } from '../../ratelimit/limiter.ts';
import { AliveSchema, NotReadySchema, ReadySchema } from '../../schemas/health.ts';
import { databaseUnreachable, databaseUnreadable, databaseWithoutSchema } from '../errors.ts';

export interface HealthOptions {
  /** Each database the instance reads, with the check that names it and how messages do. */
  databases: Array<[check: string, label: string, handle: DatabaseHandle]>;
  limiter: RateLimitStore;
}

/**
 * The probes, outside the API: no key, not rate limited, not in the API description. Their
 * answers are about this moment, so no proxy or cache may keep one.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (
  app,
  { databases, limiter },
) => {
  app.get(
    '/healthz',
    { logLevel: 'warn', schema: { hide: true, response: { 200: AliveSchema } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'ok' as const };
    },
  );
  // Not ready (503) without the database; ready but `degraded` while rate limits cannot be
  // shared, so a load balancer keeps the instance while operators are told.
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: { hide: true, response: { 200: ReadySchema, 503: NotReadySchema } },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      const checks: Record<string, 'ok' | 'unreachable'> = {};
      for (const [check, label, handle] of databases) {
        const current = await holdsCurrentSchema(handle.db).catch((error: unknown) => {
          if (isSchemaMissing(error)) return false;
          throw databaseUnreachable(label);
        });
        if (!current) throw databaseWithoutSchema(label);
        const unreadable = await unreadableTables(handle).catch(() => {
          throw databaseUnreachable(label);
        });
        if (unreadable.length > 0) {
          app.log.error(
            { tables: unreadable },
            `${label}'s login may not read these tables: grant it SELECT on them`,
          );
          throw databaseUnreadable(label);
        }
        checks[check] = 'ok';
      }
      Object.assign(checks, limiter.checks());
      const degraded = Object.values(checks).some((state) => state !== 'ok');
      return { status: degraded ? ('degraded' as const) : ('ok' as const), checks };
    },
  );
};
