import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { ERRORS, type ErrorCode } from './problems.ts';

/**
 * Building blocks shared by every resource schema. Each query parameter carries the message a
 * client sees when its value is refused (`x-error-message`, an annotation the validator
 * reads and OpenAPI shows), so one 422 can name every bad parameter plainly.
 */

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 25;
/** Any page a JSON number holds exactly: one past the last answers an empty page. */
export const MAX_PAGE = Number.MAX_SAFE_INTEGER;
export const MAX_SEARCH_LENGTH = 100;
export const MAX_IDS_PER_FILTER = 100;

export const ERROR_MESSAGE_KEYWORD = 'x-error-message';
/** On a query object: its integer parameters must be sent as plain decimal digits. */
export const PLAIN_INTEGERS_KEYWORD = 'x-plain-integers';
/**
 * On a parameter whose text the validator reads as sent (a comma list, a path id): the schema
 * and serialization the OpenAPI document shows instead, so a client generated from it takes an
 * array or an integer (see `documentedParameters` in http/openapi/document.ts).
 */
export const DOCUMENTED_AS_KEYWORD = 'x-documented-as';
export const says = (message: string) => ({ [ERROR_MESSAGE_KEYWORD]: message });

export interface DocumentedParameter {
  schema: Record<string, unknown>;
  /** `form` without explode: several values as one `name=a,b`. */
  style?: 'form';
  explode?: boolean;
}
const documentedAs = (documented: DocumentedParameter) => ({
  [DOCUMENTED_AS_KEYWORD]: documented,
});
/** A comma list, as OpenAPI says it: an array sent as `name=a,b`. */
export const commaList = (items: Record<string, unknown>, maxItems?: number) =>
  documentedAs({
    schema: { type: 'array', items, minItems: 1, ...(maxItems ? { maxItems } : {}) },
    style: 'form',
    explode: false,
  });

/**
 * Parameters carry no `examples`: the reference page would prefill "Try it out" with them and
 * filter the first answer down to nothing. Their example is a sentence of the description.
 */
export const example = (value: string) => ` Example: \`${value}\`.`;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const NullableString = nullable(Type.String());
export const DateString = Type.String({ format: 'date', examples: ['2026-03-02'] });
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-02-20T08:00:00Z'] });
export const NullableTimestamp = nullable(Timestamp);

// ---- Shared models ----------------------------------------------------------------------

/**
 * A response model shared by several operations: it carries an `$id`, is registered once
 * with `app.addSchema` (see `MODELS` in models.ts) and appears once under
 * `components.schemas` of the OpenAPI document. Route schemas point at it with `ref()`.
 */
export const model = <T extends TSchema>(id: string, schema: T): T =>
  Object.assign(schema, { $id: id });

/** A model's schema without its `$id`: for inlining where the shared models are not known. */
export function withoutId<T extends object>(schema: T): Omit<T, '$id'> {
  const { $id: _id, ...inlined } = schema as T & { $id?: unknown };
  return inlined;
}

/**
 * A `$ref` to a registered model, typed as the model itself, so handlers stay type-checked.
 * The serializer and the OpenAPI generator both resolve it against the shared schemas.
 */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('ref() needs a model with an $id (see model())');
  return Type.Unsafe<Static<T>>({ $ref: id });
}

// ---- Query parameters -------------------------------------------------------------------

export const PageParam = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE,
  default: 1,
  description: `Page number, from 1, in plain decimal digits. A page past the last answers an empty \`data\`.${example('2')}`,
  ...says(`must be an integer from 1 to ${MAX_PAGE} in plain decimal digits`),
});

export const PerPageParam = Type.Integer({
  minimum: 1,
  maximum: MAX_PER_PAGE,
  default: DEFAULT_PER_PAGE,
  description: `Page size, 1 to ${MAX_PER_PAGE}, in plain decimal digits.${example('50')}`,
  ...says(`must be an integer from 1 to ${MAX_PER_PAGE} in plain decimal digits`),
});

const ID = '[1-9][0-9]{0,15}';
/** An id in a query: plain digits, where leading zeros are digits too (`05` is 5, as `per_page=05`). */
export const QUERY_ID = `0*${ID}`;

/** One id or a comma-separated list of up to 100 (an extension: one call instead of many). */
export const IdListParam = (what: string) =>
  Type.String({
    pattern: `^${QUERY_ID}(,${QUERY_ID}){0,${MAX_IDS_PER_FILTER - 1}}$`,
    description: `Only records of this ${what}; a comma-separated list of up to ${MAX_IDS_PER_FILTER} ids for several, in plain decimal digits without spaces.${example('12,15')}`,
    ...commaList(
      { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      MAX_IDS_PER_FILTER,
    ),
    ...says(
      `must be a positive integer id or a comma-separated list of up to ${MAX_IDS_PER_FILTER}, in plain decimal digits without spaces`,
    ),
  });

export const StatusListParam = (values: readonly string[]) => {
  const one = `\\s*(${values.join('|')})\\s*`;
  return Type.String({
    pattern: `^${one}(,${one})*$`,
    description: `One status or a comma-separated list: ${values.join(', ')}.${example(values.slice(0, 2).join(','))}`,
    ...commaList({ type: 'string', enum: [...values] }),
    ...says(`must be a comma-separated list of: ${values.join(', ')}`),
  });
};

// `format: 'date'` admits year 0000, which no importer date has and PostgreSQL refuses.
const DateParam = (description: string) =>
  Type.String({
    format: 'date',
    pattern: '^(?!0000)',
    description: `${description}${example('2026-03-01')}`,
    ...says('must be a real calendar date YYYY-MM-DD'),
  });

/**
 * `from` and `to` of a date range. Neither schema can see the other, so each says in words
 * that a `from` after `to` is refused (see `queryValueErrors`): a client generated from the
 * document must not take that 422 for a broken promise.
 */
export const DateRangeParams = (from: string, to: string) => ({
  from: Type.Optional(
    DateParam(`${from} Must not be after \`to\`: a \`from\` after \`to\` is a 422 naming both.`),
  ),
  to: Type.Optional(
    DateParam(`${to} Must not be before \`from\`: a \`from\` after \`to\` is a 422 naming both.`),
  ),
});

export const SearchParam = (description: string) =>
  Type.String({
    maxLength: MAX_SEARCH_LENGTH,
    description: `${description} Case- and accent-insensitive substring match of the text trimmed of leading and trailing white space; empty or blank means no filter. Percent-encoded bytes must be UTF-8.${example('yilmaz')}`,
    ...says(`must be at most ${MAX_SEARCH_LENGTH} characters`),
  });

export const UPDATED_SINCE_FORMAT =
  'must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T00:00:00Z';

export const UpdatedSinceParam = Type.String({
  format: 'date-time',
  description: `Only records with \`updated_at\` at or after this RFC 3339 timestamp (incremental sync), which must fall within the years 0001–9999 in UTC.${example('2026-03-01T00:00:00Z')}`,
  ...says(UPDATED_SINCE_FORMAT),
});

/** `field` ascending or `-field` descending; `id` breaks ties in the same direction. */
export const SortParam = <const T extends readonly string[]>(fields: T) =>
  Type.Enum([...fields, ...fields.map((f) => `-${f}`)] as string[], {
    type: 'string',
    default: 'id',
    description: `Sort field, \`-\` for descending: ${fields.join(', ')}. Ties are broken by id in the same direction.${example(`-${fields[1] ?? fields[0]}`)}`,
    ...says(`must be one of ${fields.join(', ')}, each optionally prefixed with -`),
  });

/**
 * A record id in the path. Validated as text, so anything but plain digits (`1e2`, `+5`, `05`)
 * is answered 404 like an id that does not exist; documented as the integer it is.
 */
export const PathIdParam = (
  description: string,
  otherText = 'is answered 404, like an id that does not exist',
) =>
  Type.String({
    pattern: `^${ID}$`,
    description: `${description} Any other text (a sign, a leading zero, \`1e2\`) ${otherText}.${example('42')}`,
    ...documentedAs({ schema: { type: 'integer', minimum: 1 } }),
  });

export const IdPathParams = Type.Object({
  id: PathIdParam('Record id: a positive integer.'),
});

// ---- Response parts ---------------------------------------------------------------------

export const PaginationMetaSchema = model(
  'PaginationMeta',
  Type.Object(
    {
      current_page: Type.Integer({ minimum: 1, description: 'The page answered.' }),
      per_page: Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE }),
      total: Type.Integer({ minimum: 0, description: 'Records matching the filters.' }),
      last_page: Type.Integer({ minimum: 1 }),
      from: nullable(Type.Integer({ minimum: 1 })),
      to: nullable(Type.Integer({ minimum: 1 })),
    },
    {
      description:
        '`from`/`to` are the 1-based positions of the first and last record of the page; null when it is empty.',
    },
  ),
);

export const EmployeeSummarySchema = model(
  'EmployeeSummary',
  Type.Object(
    {
      id: Type.Integer(),
      employee_number: Type.String({ description: 'Personnel number.' }),
      full_name: Type.String(),
      department: Type.String(),
    },
    { description: 'The employee a record belongs to, embedded so no second call is needed.' },
  ),
);

const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export const ProblemSchema = model(
  'Problem',
  Type.Object(
    {
      type: Type.String({
        format: 'uri-reference',
        description:
          'Where this error is explained: the code’s entry on the service’s errors page, a reference relative to the service’s root.',
        examples: ['/docs/errors#not_found'],
      }),
      title: Type.String({ description: 'Short, fixed for the code.' }),
      status: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status.' }),
      detail: Type.String({ description: 'What went wrong in this request.' }),
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: ERROR_CODES,
        description: 'Machine-readable error code; branch on this, not on `title`.',
      }),
      errors: Type.Optional(
        Type.Array(
          Type.Object({
            parameter: Type.String({ examples: ['per_page'] }),
            message: Type.String({
              examples: ['must be an integer from 1 to 100 in plain decimal digits'],
            }),
          }),
          { description: 'validation_failed only: every bad parameter, each with its message.' },
        ),
      ),
    },
    { description: 'An RFC 9457 problem detail, sent as `application/problem+json`.' },
  ),
);

/** A page of records and where it lies in the whole list. */
export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(ref(item)), meta: ref(PaginationMetaSchema) });
/** One record. */
export const dataOf = <T extends TSchema>(item: T) => Type.Object({ data: ref(item) });
/** A short, complete, unpaginated list. */
export const referenceListOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(ref(item)) });
