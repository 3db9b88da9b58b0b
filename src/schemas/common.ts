import { type TSchema, Type } from 'typebox';

/**
 * Building blocks shared by every resource schema. Each query parameter carries the message a
 * client sees when its value is refused (`x-error-message`, an annotation the validator
 * reads and OpenAPI shows), so one 422 can name every bad parameter plainly.
 */

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 25;
export const MAX_PAGE = 1_000_000_000;
export const MAX_SEARCH_LENGTH = 100;
export const MAX_IDS_PER_FILTER = 100;

export const ERROR_MESSAGE_KEYWORD = 'x-error-message';
const says = (message: string) => ({ [ERROR_MESSAGE_KEYWORD]: message });

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const NullableString = nullable(Type.String());
export const NullableNumber = nullable(Type.Number());
export const DateString = Type.String({ format: 'date', examples: ['2026-03-02'] });
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-02-20T08:00:00Z'] });
export const NullableTimestamp = nullable(Timestamp);

// ---- Query parameters -------------------------------------------------------------------

export const PageParam = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE,
  default: 1,
  description: 'Page number, from 1. A page past the last answers an empty `data`.',
  ...says(`must be an integer from 1 to ${MAX_PAGE}`),
});

export const PerPageParam = Type.Integer({
  minimum: 1,
  maximum: MAX_PER_PAGE,
  default: DEFAULT_PER_PAGE,
  description: `Page size, 1 to ${MAX_PER_PAGE}.`,
  ...says(`must be an integer from 1 to ${MAX_PER_PAGE}`),
});

const ID = '[1-9][0-9]{0,15}';

/** One id or a comma-separated list of up to 100 (an extension: one call instead of many). */
export const IdListParam = (what: string) =>
  Type.String({
    pattern: `^\\s*${ID}\\s*(,\\s*${ID}\\s*){0,${MAX_IDS_PER_FILTER - 1}}$`,
    description: `Only records of this ${what}; a comma-separated list of up to ${MAX_IDS_PER_FILTER} ids for several.`,
    examples: ['12', '12,15'],
    ...says(
      `must be a positive integer id or a comma-separated list of up to ${MAX_IDS_PER_FILTER}`,
    ),
  });

export const StatusListParam = (values: readonly string[]) => {
  const one = `\\s*(${values.join('|')})\\s*`;
  return Type.String({
    pattern: `^${one}(,${one})*$`,
    description: `One status or a comma-separated list: ${values.join(', ')}.`,
    examples: [values.slice(0, 2).join(',')],
    ...says(`must be a comma-separated list of: ${values.join(', ')}`),
  });
};

// `format: 'date'` admits year 0000, which no importer date has and PostgreSQL refuses.
export const DateParam = (description: string) =>
  Type.String({
    format: 'date',
    pattern: '^(?!0000)',
    description,
    examples: ['2026-03-01'],
    ...says('must be a real calendar date YYYY-MM-DD'),
  });

export const SearchParam = (description: string) =>
  Type.String({
    maxLength: MAX_SEARCH_LENGTH,
    description: `${description} Case- and accent-insensitive substring match; empty means no filter.`,
    examples: ['yilmaz'],
    ...says(`must be at most ${MAX_SEARCH_LENGTH} characters`),
  });

export const UpdatedSinceParam = Type.String({
  format: 'date-time',
  description:
    'Only records with `updated_at` at or after this RFC 3339 timestamp (incremental sync).',
  examples: ['2026-03-01T00:00:00Z'],
  ...says('must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z'),
});

/** `field` ascending or `-field` descending; `id` breaks ties in the same direction. */
export const SortParam = <const T extends readonly string[]>(fields: T) =>
  Type.Enum([...fields, ...fields.map((f) => `-${f}`)] as string[], {
    default: 'id',
    description: `Sort field, \`-\` for descending: ${fields.join(', ')}. Ties are broken by id in the same direction.`,
    ...says(`must be one of ${fields.join(', ')}, each optionally prefixed with -`),
  });

/** A record id in the path; anything else is answered 404, like an id that does not exist. */
export const IdPathParams = Type.Object({
  id: Type.String({ pattern: `^${ID}$`, description: 'Record id.', examples: ['42'] }),
});

// ---- Response parts ---------------------------------------------------------------------

export const PaginationMetaSchema = Type.Object(
  {
    current_page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer(),
    last_page: Type.Integer({ minimum: 1 }),
    from: nullable(Type.Integer()),
    to: nullable(Type.Integer()),
  },
  {
    description:
      '`from`/`to` are the 1-based positions of the first and last record of the page; null when it is empty.',
  },
);

export const EmployeeSummarySchema = Type.Object({
  id: Type.Integer(),
  employee_number: Type.String(),
  full_name: Type.String(),
  department: Type.String(),
});

export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  code: Type.String(),
  errors: Type.Optional(
    Type.Array(Type.Object({ parameter: Type.String(), message: Type.String() })),
  ),
});

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), meta: PaginationMetaSchema });
export const dataOf = <T extends TSchema>(item: T) => Type.Object({ data: item });
export const referenceListOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item) });
