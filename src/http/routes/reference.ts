import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listActiveCategories } from '../../db/expenses.queries.ts';
import { listActiveLeaveTypes } from '../../db/leaves.queries.ts';
import { referenceListOf } from '../../schemas/common.ts';
import { ExpenseCategorySchema } from '../../schemas/expenses.ts';
import { LeaveTypeSchema } from '../../schemas/leaves.ts';
import type { ApiDeps } from './index.ts';

/** Small reference lists: the company's active leave types and expense categories, unpaginated. */
export const referenceRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/leave-types',
    {
      schema: {
        summary: 'List leave types',
        description:
          'The company’s active leave types. Inactive ones still appear embedded in the leaves that use them.',
        tags: ['Leaves'],
        response: { 200: referenceListOf(LeaveTypeSchema) },
      },
      config: { scope: 'leaves.read' },
    },
    async (request) => ({ data: await listActiveLeaveTypes(deps.db, request.auth.company.id) }),
  );

  app.get(
    '/expense-categories',
    {
      schema: {
        summary: 'List expense categories',
        description:
          'The company’s active expense categories. Inactive ones still appear embedded in the expenses that use them.',
        tags: ['Expenses'],
        response: { 200: referenceListOf(ExpenseCategorySchema) },
      },
      config: { scope: 'expenses.read' },
    },
    async (request) => ({ data: await listActiveCategories(deps.db, request.auth.company.id) }),
  );
};
