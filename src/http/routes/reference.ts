import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listActiveCategories } from '../../db/expenses.queries.ts';
import { listActiveLeaveTypes } from '../../db/leaves.queries.ts';
import { referenceListOf } from '../../schemas/common.ts';
import { ExpenseCategorySchema } from '../../schemas/expenses.ts';
import { LeaveTypeSchema } from '../../schemas/leaves.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonResponse, operation } from '../openapi/operation.ts';

/** Small reference lists: the company's active leave types and expense categories, unpaginated. */
export const referenceRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/leave-types',
    operation({
      operationId: 'listLeaveTypes',
      cacheable: true,
      oneStatement: true,
      summary: 'List leave types',
      description:
        'The company’s active leave types, all of them (no pagination). Inactive ones still appear embedded in the leaves that use them.',
      tag: 'Leaves',
      scope: 'leaves.read',
      success: { 200: jsonResponse('The active leave types.', referenceListOf(LeaveTypeSchema)) },
    }),
    async (request) => ({ data: await listActiveLeaveTypes(deps.db, request.auth.company.id) }),
  );

  app.get(
    '/expense-categories',
    operation({
      operationId: 'listExpenseCategories',
      cacheable: true,
      oneStatement: true,
      summary: 'List expense categories',
      description:
        'The company’s active expense categories, all of them (no pagination). Inactive ones still appear embedded in the expenses that use them.',
      tag: 'Expenses',
      scope: 'expenses.read',
      success: {
        200: jsonResponse('The active expense categories.', referenceListOf(ExpenseCategorySchema)),
      },
    }),
    async (request) => ({ data: await listActiveCategories(deps.db, request.auth.company.id) }),
  );
};
