import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findReceipt, findReceiptOfExpense, type ReceiptFiles } from '../../db/receipts.queries.ts';
import {
  type ReceiptVariant,
  signReceiptGrant,
  verifyReceiptGrant,
} from '../../receipts/signing.ts';
import { IdPathParams } from '../../schemas/common.ts';
import { ReceiptFileParams, ReceiptFileQuery, ReceiptQuery } from '../../schemas/receipts.ts';
import { ApiError, recordNotFound } from '../errors.ts';
import { type ApiDeps, apiBaseUrl } from './index.ts';

const noReceipt = () => new ApiError('receipt_not_found', 'This expense has no receipt image.');
const badSignature = () =>
  new ApiError(
    'invalid_signature',
    'The receipt link is invalid or has expired; request a new one.',
  );

function fileOf(receipt: ReceiptFiles, variant: ReceiptVariant) {
  return variant === 'original'
    ? {
        key: receipt.originalKey,
        contentType: receipt.originalContentType,
        extension: receipt.originalKey.split('.').pop(),
      }
    : { key: receipt.processedKey, contentType: 'image/jpeg', extension: 'jpg' };
}

export const receiptRoutes: FastifyPluginAsyncTypebox<{ deps: ApiDeps }> = async (
  app,
  { deps },
) => {
  const { config } = deps;

  app.get(
    '/expenses/:id/receipt',
    {
      schema: {
        summary: 'Get the receipt image',
        description: `Checks the key and that the expense is the company's, then redirects (302) to a signed URL of the image, valid ${config.signedUrlTtlSeconds} s and needing no key. 404 receipt_not_found when the expense has no receipt.`,
        tags: ['Expenses'],
        params: IdPathParams,
        querystring: ReceiptQuery,
      },
      config: { scope: 'expenses.read' },
    },
    async (request, reply) => {
      const companyId = request.auth.company.id;
      const expenseId = Number(request.params.id);
      const variant = request.query.variant ?? 'processed';
      const found = await findReceipt(deps.db, companyId, expenseId);
      if (!found.expense) throw recordNotFound();
      if (!found.receipt) throw noReceipt();
      const expires = Math.floor(Date.now() / 1000) + config.signedUrlTtlSeconds;
      const file = fileOf(found.receipt, variant);
      const direct = await deps.receipts.directUrl(file.key, {
        expiresAt: new Date(expires * 1000),
        contentType: file.contentType,
      });
      const grant = { companyId, expenseId, variant, expires };
      const signature = signReceiptGrant(grant, config.signingSecret);
      const location =
        direct ??
        `${apiBaseUrl(config, request)}/receipt-files/${expenseId}/${variant}?company=${companyId}&expires=${expires}&signature=${signature}`;
      return reply.header('cache-control', 'no-store').redirect(location, 302);
    },
  );

  // The signed file route: no key, no rate limit. The signature is the authority, bound to one
  // company's expense, one variant and an expiry. Never logged with its query string.
  app.get(
    '/receipt-files/:expenseId/:variant',
    {
      schema: {
        summary: 'Receipt image behind a signed URL',
        description:
          'Where /expenses/{id}/receipt redirects. Needs no key; the signature and expiry in the URL are checked. 403 invalid_signature when tampered with or expired.',
        tags: ['Expenses'],
        params: ReceiptFileParams,
        querystring: ReceiptFileQuery,
        security: [],
      },
      config: { public: true },
    },
    async (request, reply) => {
      const { expenseId, variant } = request.params;
      const { company, expires, signature } = request.query;
      const grant = {
        companyId: Number(company),
        expenseId: Number(expenseId),
        variant,
        expires: Number(expires),
      };
      if (!verifyReceiptGrant(grant, signature ?? '', config.signingSecret)) throw badSignature();
      const receipt = await findReceiptOfExpense(deps.db, grant.companyId, grant.expenseId);
      if (!receipt) throw noReceipt();
      const file = fileOf(receipt, variant);
      const stat = await deps.receipts.stat(file.key);
      if (!stat) throw noReceipt();
      const etag = `"${receipt.originalSha256}-${variant}"`;
      const remaining = Math.max(0, grant.expires - Math.floor(Date.now() / 1000));
      reply
        .header('cache-control', `private, max-age=${remaining}`)
        .header('etag', etag)
        .header('content-disposition', `inline; filename="receipt-${expenseId}.${file.extension}"`);
      if (request.headers['if-none-match'] === etag) return reply.status(304).send();
      return reply
        .type(file.contentType)
        .header('content-length', String(stat.size))
        .send(deps.receipts.read(file.key));
    },
  );
};
