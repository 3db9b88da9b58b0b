import { Type } from 'typebox';

export const ReceiptQuery = Type.Object({
  variant: Type.Optional(
    Type.Enum(['processed', 'original'], {
      default: 'processed',
      description:
        '`processed` (default): rotated upright, at most 2000 px, JPEG, metadata stripped. `original`: the file as imported.',
      'x-error-message': 'must be processed or original',
    }),
  ),
});

export const ReceiptFileParams = Type.Object({
  expenseId: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }),
  variant: Type.Enum(['processed', 'original']),
});

// Deliberately loose: a missing, truncated or altered part is an invalid signature (403),
// decided by the signature check, not a validation error.
export const ReceiptFileQuery = Type.Object({
  company: Type.Optional(Type.String({ maxLength: 32 })),
  expires: Type.Optional(Type.String({ maxLength: 32 })),
  signature: Type.Optional(Type.String({ maxLength: 128 })),
});
