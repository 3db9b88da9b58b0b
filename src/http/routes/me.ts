import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ref } from '../../schemas/common.ts';
import { MeSchema } from '../../schemas/me.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonResponse, operation } from '../openapi/operation.ts';

export const meRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (app) => {
  app.get(
    '/me',
    operation({
      operationId: 'getMe',
      summary: 'Check the key',
      description:
        'Validates the key and shows its company, the key itself, the access mode and the key’s rate limits. The first call to make with a new key.',
      tag: 'Account',
      scope: null,
      queued: false,
      success: { 200: jsonResponse('The key and its company.', ref(MeSchema)) },
    }),
    async (request) => {
      const { auth } = request;
      return {
        company: auth.company,
        api_key: {
          id: auth.keyId,
          name: auth.keyName,
          scopes: auth.scopes as Array<'leaves.read' | 'expenses.read'>,
          last_used_at: auth.usedAt,
        },
        access: 'read-only' as const,
        rate_limit: { per_minute: auth.perMinute, per_hour: auth.perHour },
      };
    },
  );
};
