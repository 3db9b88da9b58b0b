import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findEmployee, listEmployees } from '../../db/employees.queries.ts';
import { dataOf, IdPathParams, listOf } from '../../schemas/common.ts';
import { EmployeeListQuery, EmployeeSchema } from '../../schemas/employees.ts';
import { type ApiDeps, listSource } from '../deps.ts';
import { recordNotFound } from '../errors.ts';
import { jsonResponse, operation, RECORD_NOT_FOUND } from '../openapi/operation.ts';
import {
  pageRequest,
  rejectBadQueryValues,
  searchText,
  sortOrder,
  utcTimestamp,
  valueList,
} from '../params.ts';

export const employeeRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/employees',
    {
      ...operation({
        operationId: 'listEmployees',
        cacheable: true,
        summary: 'List employees',
        description:
          'The roster, to resolve an employee_id in a leave or expense to a name and department. Never contains sensitive fields.',
        tag: 'Employees',
        scope: null,
        querystring: EmployeeListQuery,
        success: { 200: jsonResponse('A page of employees.', listOf(EmployeeSchema)) },
      }),
      preHandler: rejectBadQueryValues,
    },
    async (request) => {
      const { query } = request;
      return listEmployees(
        listSource(deps, request),
        request.auth.company.id,
        {
          status: valueList(query.status),
          search: searchText(query.search),
          updatedSince: utcTimestamp(query.updated_since),
        },
        sortOrder(query.sort),
        pageRequest(query),
      );
    },
  );

  app.get(
    '/employees/:id',
    operation({
      operationId: 'getEmployee',
      cacheable: true,
      oneStatement: true,
      summary: 'Get an employee',
      description: 'One employee of the key’s company; 404 when absent or another company’s.',
      tag: 'Employees',
      scope: null,
      params: IdPathParams,
      success: { 200: jsonResponse('The employee.', dataOf(EmployeeSchema)) },
      notFound: RECORD_NOT_FOUND,
    }),
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
