import { Type } from 'typebox';
import { RECEIPT_VARIANTS } from '../receipts/signing.ts';
import { PathIdParam } from './common.ts';

const VARIANT_DESCRIPTION =
  '`processed` (default): rotated upright, at most 2000 px, JPEG, metadata stripped. `original`: the file as imported.';

export const ReceiptQuery = Type.Object({
  variant: Type.Optional(
    Type.Enum([...RECEIPT_VARIANTS], {
      type: 'string',
      default: 'processed',
      description: VARIANT_DESCRIPTION,
      'x-error-message': 'must be processed or original',
    }),
  ),
});

/** The types a served receipt can have: the processed JPEG, or an original as imported. */
export const RECEIPT_FILE_TYPES = [
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/heic',
  'image/avif',
  'image/tiff',
] as const;

export const ReceiptFileParams = Type.Object({
  expenseId: PathIdParam(
    'The expense the URL was signed for.',
    'is an altered URL: 403 `invalid_signature`',
  ),
  variant: Type.Enum([...RECEIPT_VARIANTS], {
    type: 'string',
    description: `${VARIANT_DESCRIPTION} Any other is an altered URL: 403 \`invalid_signature\`.`,
  }),
});

// Deliberately loose: a missing, truncated, lengthened or altered part is an invalid signature
// (403), decided by the signature check, not a validation error.
export const ReceiptFileQuery = Type.Object({
  company: Type.Optional(
    Type.String({
      description: 'The company the URL was signed for. Example: `1`.',
    }),
  ),
  expires: Type.Optional(
    Type.String({
      description: 'Unix time, in seconds, after which the URL is refused. Example: `1772438400`.',
    }),
  ),
  signature: Type.Optional(
    Type.String({
      description:
        'HMAC-SHA256 of the other parts, base64url. Example: `1lWFAIFGFMj-G56p_W_XQO1EP-Lkbvoq1w8Q3DUSbbQ`.',
    }),
  ),
});
