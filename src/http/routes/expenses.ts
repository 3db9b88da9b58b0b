import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findExpense, listExpenses } from '../../db/expenses.queries.ts';
import type { ExpenseStatus } from '../../domain.ts';
import { dataOf, IdPathParams, listOf } from '../../schemas/common.ts';
import { ExpenseDetailSchema, ExpenseListQuery, ExpenseSchema } from '../../schemas/expenses.ts';
import { type ApiDeps, listSource, receiptUrls } from '../deps.ts';
import { recordNotFound } from '../errors.ts';
import { jsonResponse, operation, RECORD_NOT_FOUND } from '../openapi/operation.ts';
import {
  idList,
  pageRequest,
  recordListFilters,
  rejectBadQueryValues,
  sortOrder,
} from '../params.ts';

export const expenseRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/expenses',
    {
      ...operation({
        operationId: 'listExpenses',
        cacheable: true,
        summary: 'List expenses',
        description:
          'Expense records of the key’s company; `from`/`to` bound expense_date, inclusive, and `from` after `to` is a 422.',
        tag: 'Expenses',
        scope: 'expenses.read',
        querystring: ExpenseListQuery,
        success: { 200: jsonResponse('A page of expenses.', listOf(ExpenseSchema)) },
      }),
      preHandler: rejectBadQueryValues,
    },
    async (request) => {
      const { query } = request;
      return listExpenses(
        listSource(deps, request),
        request.auth.company.id,
        { ...recordListFilters<ExpenseStatus>(query), categoryIds: idList(query.category_id) },
        sortOrder(query.sort),
        pageRequest(query),
        receiptUrls(deps.config, request),
      );
    },
  );

  app.get(
    '/expenses/:id',
    operation({
      operationId: 'getExpense',
      cacheable: true,
      oneStatement: true,
      summary: 'Get an expense',
      description: 'One expense with its items and the URLs of its receipt variants.',
      tag: 'Expenses',
      scope: 'expenses.read',
      params: IdPathParams,
      success: { 200: jsonResponse('The expense.', dataOf(ExpenseDetailSchema)) },
      notFound: RECORD_NOT_FOUND,
    }),
    async (request) => {
      const expense = await findExpense(
        deps.db,
        request.auth.company.id,
        Number(request.params.id),
        receiptUrls(deps.config, request),
      );
      if (!expense) throw recordNotFound();
      return { data: expense };
    },
  );
};
