import { createHmac, timingSafeEqual } from 'node:crypto';

export const RECEIPT_VARIANTS = ['processed', 'original'] as const;
export type ReceiptVariant = (typeof RECEIPT_VARIANTS)[number];

/** What a signed receipt URL is bound to: one company's expense, one variant, one expiry. */
export interface ReceiptGrant {
  companyId: number;
  expenseId: number;
  variant: ReceiptVariant;
  /** Unix time in seconds after which the URL is refused. */
  expires: number;
}

const payload = (grant: ReceiptGrant) =>
  `receipt:v1:${grant.companyId}:${grant.expenseId}:${grant.variant}:${grant.expires}`;

export function signReceiptGrant(grant: ReceiptGrant, secret: string): string {
  return createHmac('sha256', secret).update(payload(grant)).digest('base64url');
}

/** Constant-time check of a presented signature; an expired grant is never valid. */
export function verifyReceiptGrant(
  grant: ReceiptGrant,
  signature: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!Number.isSafeInteger(grant.expires) || grant.expires < nowSeconds) return false;
  const expected = Buffer.from(signReceiptGrant(grant, secret));
  const presented = Buffer.from(signature);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
