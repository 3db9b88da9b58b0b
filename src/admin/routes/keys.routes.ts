import { Type } from 'typebox';
import { DEFAULT_PER_HOUR, DEFAULT_PER_MINUTE, SCOPES } from '../../keys/scopes.ts';
import {
  AdminKeySchema,
  CompanyIdParams,
  CreatedKeySchema,
  KeyIdParams,
  NewKeySchema,
} from '../../schemas/admin.ts';
import { ref } from '../../schemas/common.ts';
import { companyNotFound, keyNotFound } from '../../services/errors.ts';
import { createKey, listKeys, revokeKey } from '../../services/keys.service.ts';
import { audit } from '../audit.ts';
import type { AdminRoutes } from '../deps.ts';
import { pathId, refuseUndeclaredBody } from '../errors.ts';
import { adminOperation, dataOf } from '../operation.ts';

export const keyRoutes: AdminRoutes = async (app, { deps }) => {
  const db = deps.database.db;
  app.get(
    '/admin/companies/:id/keys',
    {
      schema: adminOperation({
        operationId: 'listKeys',
        summary: 'List a company’s keys',
        description:
          'Every key of the company, revoked ones included, with its short prefix (never the key), scopes, limits and times.',
        tag: 'Keys',
        params: CompanyIdParams,
        success: [200, 'The keys, by id.', dataOf(Type.Array(ref(AdminKeySchema)))],
        errors: [404],
      }),
    },
    async (request) => ({ data: await listKeys(db, pathId(request.params.id, companyNotFound)) }),
  );

  app.post(
    '/admin/companies/:id/keys',
    {
      schema: adminOperation({
        operationId: 'createKey',
        summary: 'Create a key',
        description: `Creates an API key of the company and answers it once, in \`key\`: only its SHA-256 digest is stored. Defaults: scopes ${SCOPES.join(', ')}; ${DEFAULT_PER_MINUTE} a minute, ${DEFAULT_PER_HOUR} an hour.`,
        tag: 'Keys',
        params: CompanyIdParams,
        body: NewKeySchema,
        success: [201, 'The key, with the raw key this once.', dataOf(ref(CreatedKeySchema))],
        errors: [404, 422],
      }),
    },
    async (request, reply) => {
      const { name, scopes, per_minute, per_hour } = request.body;
      const created = await deps.database.write((db) =>
        createKey(db, {
          companyId: pathId(request.params.id, companyNotFound),
          name,
          scopes: scopes ?? [...SCOPES],
          perMinute: per_minute ?? DEFAULT_PER_MINUTE,
          perHour: per_hour ?? DEFAULT_PER_HOUR,
        }),
      );
      audit(request.log, request.adminActor, 'key.create', {
        companyId: created.key.company_id,
        keyId: created.key.id,
        prefix: created.key.prefix,
        scopes: created.key.scopes,
      });
      return reply.status(201).send({ data: { ...created.key, key: created.raw } });
    },
  );

  app.post(
    '/admin/keys/:keyId/revoke',
    {
      schema: adminOperation({
        operationId: 'revokeKey',
        summary: 'Revoke a key',
        description:
          'Revokes the key: it gets 401 on every instance within 2 s. Revoking it again keeps the first time.',
        tag: 'Keys',
        params: KeyIdParams,
        success: [200, 'The key after the change.', dataOf(ref(AdminKeySchema))],
        emptyBody: true,
        errors: [404, 422],
      }),
      preValidation: refuseUndeclaredBody,
    },
    async (request) => {
      const key = await deps.database.write((db) =>
        revokeKey(db, pathId(request.params.keyId, keyNotFound)),
      );
      audit(request.log, request.adminActor, 'key.revoke', {
        companyId: key.company_id,
        keyId: key.id,
        prefix: key.prefix,
      });
      return { data: key };
    },
  );
};
