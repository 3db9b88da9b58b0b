import { Type } from 'typebox';
import { AdminCompanySchema, CompanyIdParams } from '../../schemas/admin.ts';
import { ref } from '../../schemas/common.ts';
import {
  changeCompanyStatus,
  getCompany,
  listCompanies,
} from '../../services/companies.service.ts';
import { audit } from '../audit.ts';
import type { AdminRoutes } from '../deps.ts';
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
    async (request) => ({ data: await getCompany(db, request.params.id) }),
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
          errors: [404],
        }),
      },
      async (request) => {
        const company = await changeCompanyStatus(db, request.params.id, active);
        audit(request.log, request.adminActor, `company.${verb}`, { companyId: company.id });
        return { data: company };
      },
    );
  }
};
