import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findReceipt, findSignedReceipt, type ReceiptFiles } from '../../db/receipts.queries.ts';
import {
  type ReceiptVariant,
  signReceiptGrant,
  verifyReceiptGrant,
} from '../../receipts/signing.ts';
import { IdPathParams } from '../../schemas/common.ts';
import {
  RECEIPT_FILE_TYPES,
  ReceiptFileParams,
  ReceiptFileQuery,
  ReceiptQuery,
} from '../../schemas/receipts.ts';
import { type ApiDeps, apiBaseUrl } from '../deps.ts';
import {
  companyInactive,
  databaseUnavailable,
  invalidSignature,
  receiptNotFound,
  recordNotFound,
  validationFailed,
} from '../errors.ts';
import { headers, RATE_LIMIT_HEADERS } from '../openapi/headers.ts';
import { HOST_REFUSED, noBodyResponse, operation, problemResponse } from '../openapi/operation.ts';
import { canonicalInteger } from '../params.ts';
import { ifNoneMatchNames } from '../plugins/etag.ts';

/** The signed URL's answer: the image bytes, in any type a served receipt can have. */
const imageResponse = (description: string) => ({
  description,
  headers: headers(
    'RequestId',
    'CacheControlReceiptFile',
    'ReceiptETag',
    'ReceiptContentLength',
    'ReceiptContentDisposition',
  ),
  content: Object.fromEntries(
    RECEIPT_FILE_TYPES.map((type) => [
      type,
      { schema: Type.Unsafe<unknown>({ type: 'string', format: 'binary' }) },
    ]),
  ),
});

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
    operation({
      operationId: 'getExpenseReceipt',
      summary: 'Get the receipt image',
      description: `Checks the key and that the expense is the company’s, then redirects (302) to a signed URL of the image, valid ${config.signedUrlTtlSeconds} s and needing no key. 404 receipt_not_found when the expense has no receipt.`,
      tag: 'Expenses',
      scope: 'expenses.read',
      params: IdPathParams,
      querystring: ReceiptQuery,
      success: {
        // The service itself answers 302; a client that follows redirects (fetch, `curl -L`,
        // the reference page, generated clients) ends with the signed URL's 200 and the image.
        200: imageResponse(
          'What a client that follows redirects receives (fetch, `curl -L`, the reference page): the image from the signed URL of the 302, as `GET /receipt-files/…` answers it. The service itself answers 302.',
        ),
        302: noBodyResponse('Redirect to a signed URL of the image (see `Location`); no body.', [
          'RequestId',
          'ReceiptLocation',
          'CacheControlNoStore',
          ...RATE_LIMIT_HEADERS,
        ]),
      },
      notFound: {
        description:
          'No expense with this id in the key’s company (`not_found`), or the expense has no receipt image (`receipt_not_found`).',
        examples: [recordNotFound().toProblem(), receiptNotFound().toProblem()],
      },
    }),
    async (request, reply) => {
      const companyId = request.auth.company.id;
      const expenseId = Number(request.params.id);
      const variant = request.query.variant ?? 'processed';
      const found = await findReceipt(deps.db, companyId, expenseId);
      if (!found.expense) throw recordNotFound();
      if (!found.receipt) throw receiptNotFound();
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
        operationId: 'getReceiptFile',
        summary: 'Receipt image behind a signed URL',
        description:
          'Where /expenses/{id}/receipt redirects: take the URL from its `Location`, never build one. Needs no key and is not rate limited; the signature and expiry in the URL are checked. 403 invalid_signature when tampered with or expired, company_inactive once the company is deactivated.',
        tags: ['Expenses'],
        security: [],
        params: ReceiptFileParams,
        querystring: ReceiptFileQuery,
        response: {
          200: imageResponse(
            'The image. `processed` is always JPEG; `original` keeps the type it was imported with.',
          ),
          400: HOST_REFUSED,
          304: noBodyResponse(
            'The `If-None-Match` ETag is current: use the cached image. No body.',
            ['RequestId', 'CacheControlReceiptFile', 'ReceiptETag', 'ReceiptContentDisposition'],
          ),
          403: problemResponse(
            'The URL was altered (any part of it, its path too), truncated or has expired (`invalid_signature`): get a new one from /expenses/{id}/receipt. Or its company has been deactivated since it was signed (`company_inactive`).',
            [invalidSignature().toProblem(), companyInactive('receipt').toProblem()],
            [],
          ),
          404: problemResponse(
            'The receipt is gone since the URL was signed (`receipt_not_found`).',
            [receiptNotFound().toProblem()],
            [],
          ),
          422: problemResponse(
            'A query part is given twice; `errors` names it.',
            [
              validationFailed([
                { parameter: 'signature', message: 'must be given once, not 2 times' },
              ]).toProblem(),
            ],
            [],
          ),
          503: problemResponse(
            'The database is unreachable for the moment; retry after `Retry-After` seconds.',
            [databaseUnavailable().toProblem()],
            ['RetryAfter'],
          ),
        },
      },
      config: { public: true },
      // A path that names no expense or variant was altered too (`/receipt-files/1/thumb`,
      // `/receipt-files/1e0/…`): 403 as for any other part, not the 404 of other operations.
      attachValidation: true,
    },
    async (request, reply) => {
      const invalid = request.validationError;
      if (invalid) throw invalid.validationContext === 'params' ? invalidSignature() : invalid;
      const { expenseId, variant } = request.params;
      const { company, expires, signature } = request.query;
      // A part not written as it was signed (`1e0`, `+1`, `1.0`, `01`) matches no signature.
      const grant = {
        companyId: canonicalInteger(company),
        expenseId: Number(expenseId),
        variant,
        expires: canonicalInteger(expires),
      };
      if (!verifyReceiptGrant(grant, signature ?? '', config.signingSecret))
        throw invalidSignature();
      const found = await findSignedReceipt(deps.db, grant.companyId, grant.expenseId);
      if (!found) throw receiptNotFound();
      if (!found.companyActive) throw companyInactive('receipt');
      const { receipt } = found;
      const file = fileOf(receipt, variant);
      const stat = await deps.receipts.stat(file.key);
      if (!stat) {
        // The expense names the file but the store has none: RECEIPTS_DIR names another folder,
        // or files were lost. The operator hears of it; the caller gets the same 404.
        request.log.warn(
          { expenseId: grant.expenseId, variant, companyId: grant.companyId },
          'receipt file missing from the receipt store (RECEIPTS_DIR)',
        );
        throw receiptNotFound();
      }
      const etag = `"${receipt.originalSha256}-${variant}"`;
      const remaining = Math.max(0, grant.expires - Math.floor(Date.now() / 1000));
      reply
        .header('cache-control', `private, max-age=${remaining}`)
        .header('etag', etag)
        .header('content-disposition', `inline; filename="receipt-${expenseId}.${file.extension}"`);
      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch && ifNoneMatchNames(ifNoneMatch, etag)) return reply.status(304).send();
      return reply
        .type(file.contentType)
        .header('content-length', String(stat.size))
        .send(deps.receipts.read(file.key));
    },
  );
};
