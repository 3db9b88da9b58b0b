import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findReceipt } from '../../db/receipts.queries.ts';
import { IdPathParams } from '../../schemas/common.ts';
import { ReceiptQuery } from '../../schemas/receipts.ts';
import { ApiError, recordNotFound } from '../errors.ts';
import type { ApiDeps } from './index.ts';

export const receiptRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/expenses/:id/receipt',
    {
      schema: {
        summary: 'Get the receipt image',
        description:
          'Redirects (302) to a short-lived signed URL of the receipt image. 404 receipt_not_found when the expense has no receipt.',
        tags: ['Expenses'],
        params: IdPathParams,
        querystring: ReceiptQuery,
      },
      config: { scope: 'expenses.read' },
    },
    async (request) => {
      const found = await findReceipt(deps.db, request.auth.company.id, Number(request.params.id));
      if (!found.expense) throw recordNotFound();
      // Signed redirects arrive with the receipts issue; until then no receipt can be served.
      throw new ApiError('receipt_not_found', 'This expense has no receipt image.');
    },
  );
};
