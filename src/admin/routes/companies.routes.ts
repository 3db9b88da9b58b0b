import { Type } from 'typebox';
import {
  AdminCompanySchema,
  CompanyIdParams,
  PurgeRequestSchema,
  PurgeSummarySchema,
} from '../../schemas/admin.ts';
import { ref } from '../../schemas/common.ts';
import {
  changeCompanyStatus,
  getCompany,
  listCompanies,
  purgeConfirmedCompany,
} from '../../services/companies.service.ts';
import { companyNotFound } from '../../services/errors.ts';
import { audit } from '../audit.ts';
import type { AdminRoutes } from '../deps.ts';
import { pathId, refuseUndeclaredBody } from '../errors.ts';
import { adminOperation, dataOf } from '../operation.ts';

export const companyRoutes: AdminRoutes = async (app, { deps }) => {
  const db = deps.database.db;
  app.get(
    '/admin/companies',
    {
      schema: adminOperation({
        operationId: 'listCompanies',
        summary: 'List companies',
        description: 'Every company, by id, with its status (as `cdapi companies list`).',
        tag: 'Companies',
        success: [200, 'The companies.', dataOf(Type.Array(ref(AdminCompanySchema)))],
      }),
    },
    async () => ({ data: await listCompanies(db) }),
  );

  app.get(
    '/admin/companies/:id',
    {
      schema: adminOperation({
        operationId: 'getCompany',
        summary: 'Get a company',
        description: 'One company and its status.',
        tag: 'Companies',
        params: CompanyIdParams,
        success: [200, 'The company.', dataOf(ref(AdminCompanySchema))],
        errors: [404],
      }),
    },
    async (request) => ({ data: await getCompany(db, pathId(request.params.id, companyNotFound)) }),
  );

  for (const [verb, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    app.post(
      `/admin/companies/:id/${verb}`,
      {
        schema: adminOperation({
          operationId: `${verb}Company`,
          summary: active ? 'Activate a company' : 'Deactivate a company',
          description: active
            ? 'Lets the company’s keys read data again (as `cdapi companies activate`).'
            : 'Refuses the company’s keys with 403 `company_inactive`, on every instance within 2 s (as `cdapi companies deactivate`).',
          tag: 'Companies',
          params: CompanyIdParams,
          success: [200, 'The company after the change.', dataOf(ref(AdminCompanySchema))],
          emptyBody: true,
          errors: [404, 422],
        }),
        preValidation: refuseUndeclaredBody,
      },
      async (request) => {
        const company = await deps.database.write((db) =>
          changeCompanyStatus(db, pathId(request.params.id, companyNotFound), active),
        );
        audit(request.log, request.adminActor, `company.${verb}`, { companyId: company.id });
        return { data: company };
      },
    );
  }

  app.post(
    '/admin/companies/:id/purge',
    {
      schema: adminOperation({
        operationId: 'purgeCompany',
        summary: 'Purge a company',
        description:
          'Deletes the company with all its records, keys and receipt files, in one transaction, once `confirm` repeats its id (as `cdapi companies purge ID --confirm ID`). Its keys answer 401 on every instance within 2 s. Nothing can bring it back.',
        tag: 'Companies',
        params: CompanyIdParams,
        body: PurgeRequestSchema,
        success: [200, 'What was removed.', dataOf(ref(PurgeSummarySchema))],
        errors: [404, 422],
      }),
    },
    async (request) => {
      const id = pathId(request.params.id, companyNotFound);
      const summary = await purgeConfirmedCompany(deps.database, deps.receipts, id, {
        field: 'confirm',
        value: request.body.confirm,
      });
      audit(request.log, request.adminActor, 'company.purge', {
        companyId: id,
        removed: summary.removed,
        receiptFilesLeft: summary.receipt_files_left.length || undefined,
      });
      return { data: summary };
    },
  );
};
