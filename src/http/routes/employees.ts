import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findEmployee, listEmployees } from '../../db/employees.queries.ts';
import { dataOf, IdPathParams, listOf } from '../../schemas/common.ts';
import { EmployeeListQuery, EmployeeSchema } from '../../schemas/employees.ts';
import { recordNotFound } from '../errors.ts';
import { pageRequest, searchText, sortOrder, valueList } from '../params.ts';
import type { ApiDeps } from './index.ts';

export const employeeRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/employees',
    {
      schema: {
        summary: 'List employees',
        description:
          'The roster, to resolve an employee_id in a leave or expense to a name and department. Never contains sensitive fields.',
        tags: ['Employees'],
        querystring: EmployeeListQuery,
        response: { 200: listOf(EmployeeSchema) },
      },
      config: { scope: null },
    },
    async (request) => {
      const { query } = request;
      return listEmployees(
        deps.db,
        request.auth.company.id,
        { status: valueList(query.status), search: searchText(query.search) },
        sortOrder(query.sort),
        pageRequest(query),
      );
    },
  );

  app.get(
    '/employees/:id',
    {
      schema: {
        summary: 'Get an employee',
        description: 'One employee of the key’s company; 404 when absent or another company’s.',
        tags: ['Employees'],
        params: IdPathParams,
        response: { 200: dataOf(EmployeeSchema) },
      },
      config: { scope: null },
    },
    async (request) => {
      const employee = await findEmployee(
        deps.db,
        request.auth.company.id,
        Number(request.params.id),
      );
      if (!employee) throw recordNotFound();
      return { data: employee };
    },
  );
};
