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
