import { type TSchema, Type } from 'typebox';
import type { Scope } from '../../keys/scopes.ts';
import {
  ERROR_MESSAGE_KEYWORD,
  PLAIN_INTEGERS_KEYWORD,
  ProblemSchema,
  ref,
} from '../../schemas/common.ts';
import { PROBLEM_CONTENT_TYPE, type Problem } from '../../schemas/problems.ts';
import {
  companyInactive,
  databaseUnavailable,
  insufficientScope,
  noSuchResource,
  rateLimited,
  recordNotFound,
  unauthenticated,
  unusableHost,
  validationFailed,
} from '../errors.ts';
import { type HeaderKey, headers, RATE_LIMIT_HEADERS } from './headers.ts';

/**
 * Route schemas for the authenticated operations. One call gives a route everything the
 * service and its OpenAPI description need: the scope the auth hook checks (`config.scope`),
 * the scope said in the description and in `x-required-scope`, and every response the
 * operation can give. The error responses are real route responses: Fastify serializes the
 * problem bodies with them, so the document cannot promise a field the service drops.
 */

export type Tag = 'Account' | 'Employees' | 'Leaves' | 'Expenses' | 'Changes';

/** The operation groups of the reference page, in order. */
export const TAGS: { name: Tag; description: string }[] = [
  { name: 'Account', description: 'The API key in use: check it before anything else.' },
  { name: 'Employees', description: 'The company’s employees, without any sensitive field.' },
  { name: 'Leaves', description: 'Leave requests and the company’s leave types.' },
  {
    name: 'Expenses',
    description: 'Expense records, their receipt images and the company’s expense categories.',
  },
  {
    name: 'Changes',
    description: 'The change feed: keep a copy of the company’s data in step, deletions included.',
  },
];

/** A JSON success answer: company data, never cached. */
export function jsonResponse<T extends TSchema>(description: string, schema: T) {
  return {
    description,
    headers: headers('RequestId', 'CacheControlNoStore', 'ETag', ...RATE_LIMIT_HEADERS),
    content: { 'application/json': { schema } },
  };
}

/**
 * An answer without a body (a redirect, a 304). `type: 'null'` keeps a body out of the
 * document; typed `undefined` so the handler sends nothing.
 */
export function noBodyResponse(description: string, carries: HeaderKey[]) {
  return Type.Unsafe<undefined>({ type: 'null', description, headers: headers(...carries) });
}

/** An error answer: a problem+json body, with one example for each code it can carry. */
export function problemResponse(description: string, examples: Problem[], carries: HeaderKey[]) {
  return {
    description,
    headers: headers('RequestId', ...carries),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: ref(ProblemSchema),
        examples: Object.fromEntries(
          examples.map((example) => [example.code, { summary: example.title, value: example }]),
        ),
      },
    },
  };
}

type ProblemResponse = ReturnType<typeof problemResponse>;
type ErrorStatus = 304 | 400 | 401 | 403 | 404 | 422 | 429 | 503;

interface OperationSpec<Q, P, R> {
  /** A stable name for client generators: `listLeaves`, `getLeave`. */
  operationId: string;
  summary: string;
  description: string;
  tag: Tag;
  /** The scope a key needs; null when any valid key may call the operation. */
  scope: Scope | null;
  /**
   * For an operation any key may call whose parameters can name data of a scope (the change
   * feed's `resources`): what its 403 `insufficient_scope` means.
   */
  scopedParameters?: string;
  querystring?: Q;
  params?: P;
  /** The answer when all goes well, by status. */
  success: R;
  /** When the operation looks a record up: what its 404 means, and its codes. */
  notFound?: { description: string; examples: Problem[] };
  /**
   * The answer depends on nothing but the company's data and the URL, so the response cache
   * may keep it (not /me, whose last_used_at is the request's time; not signed redirects).
   */
  cacheable?: boolean;
  /**
   * The answer is read in one statement, which sees one state of the data by itself: it is not
   * checked against the company's data version afterwards (see `readWithinOneVersion`).
   */
  oneStatement?: boolean;
  /**
   * False for a cheap operation served at once even when the instance is busy (`/me`: a key
   * check must not wait behind data reads); see `admission.ts`.
   */
  queued?: boolean;
}

export interface OperationSchema<Q, P, R> {
  operationId: string;
  summary: string;
  description: string;
  tags: Tag[];
  security: Array<Record<string, string[]>>;
  'x-required-scope': Scope | null;
  querystring: Q;
  params: P;
  /** 422 is present only where the operation can give it. */
  response: R & Record<ErrorStatus, ProblemResponse>;
}

/** Every operation's 400: the absolute URLs of answers are built from the request's host. */
export const HOST_REFUSED = problemResponse(
  'The `Host` header (behind a trusted proxy, `X-Forwarded-Host` or `X-Forwarded-Proto`) names no host: no answer’s URLs could be built from it.',
  [unusableHost('host').toProblem()],
  [],
);

/** The 404 of a record looked up by id. */
export const RECORD_NOT_FOUND = {
  description: 'No record with this id in the key’s company (or the id is malformed).',
  examples: [recordNotFound().toProblem()],
};

/** The 404 of an operation that looks nothing up by id. */
const PATH_NOT_FOUND = problemResponse(
  'Never for this path itself: a path under the base URL that names no operation (a misspelt resource, an extra segment) is answered 404 `not_found`, with or without a key.',
  [noSuchResource().toProblem()],
  [],
);

/** The 422 example: the first query parameter refused, with the message its schema declares. */
function validationExample(querystring: TSchema): Problem {
  const properties = (querystring as { properties?: Record<string, Record<string, unknown>> })
    .properties;
  const [name, schema] = Object.entries(properties ?? {})[0] ?? ['page', {}];
  const message = schema[ERROR_MESSAGE_KEYWORD];
  return validationFailed([
    { parameter: name, message: typeof message === 'string' ? message : 'is invalid' },
  ]).toProblem();
}

function scopeSentence(scope: Scope | null): string {
  return scope === null
    ? '**Scope:** none; any valid API key may call this operation.'
    : `**Scope:** \`${scope}\`. A key without it is answered 403 \`insufficient_scope\`.`;
}

export function operation<
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  R extends Record<number, unknown> = Record<number, unknown>,
>(
  spec: OperationSpec<Q, P, R>,
): {
  schema: OperationSchema<Q, P, R>;
  config: { scope: Scope | null; cacheable: boolean; oneStatement: boolean; queued: boolean };
} {
  const { scope } = spec;
  const accepted: HeaderKey[] = RATE_LIMIT_HEADERS;
  const errors: Partial<Record<ErrorStatus, unknown>> = {
    400: HOST_REFUSED,
    401: problemResponse(
      'No valid API key: the `Authorization: Bearer` header is missing, malformed, unknown or revoked.',
      [unauthenticated().toProblem()],
      ['WwwAuthenticate'],
    ),
    403: problemResponse(
      scope === null
        ? `The key’s company is inactive (\`company_inactive\`)${spec.scopedParameters ? `, or ${spec.scopedParameters} (\`insufficient_scope\`, which carries \`WWW-Authenticate\`)` : ''}; with the key’s rate-limit headers (a \`company_inactive\` is not counted).`
        : `The key’s company is inactive (\`company_inactive\`), or the key lacks the scope \`${scope}\` (\`insufficient_scope\`, which carries \`WWW-Authenticate\`); with the key’s rate-limit headers (a \`company_inactive\` is not counted).`,
      [
        companyInactive().toProblem(),
        ...(scope !== null
          ? [insufficientScope(scope).toProblem()]
          : spec.scopedParameters
            ? [insufficientScope('expenses.read').toProblem()]
            : []),
      ],
      scope === null && !spec.scopedParameters
        ? accepted
        : ['WwwAuthenticateInsufficientScope', ...accepted],
    ),
  };
  // 401, 404 and 429 are documented for every operation: one that looks nothing up by id says
  // where its 404 comes from, a path beside it that names no operation.
  errors[404] = spec.notFound
    ? problemResponse(spec.notFound.description, spec.notFound.examples, accepted)
    : PATH_NOT_FOUND;
  if (spec.querystring) {
    const properties = (spec.querystring as { properties?: Record<string, unknown> }).properties;
    const range =
      properties?.from && properties.to
        ? ' A `from` after `to` is invalid too: both are named.'
        : '';
    errors[422] = problemResponse(
      `One or more query parameters are invalid; \`errors\` names each one with its message.${range}`,
      [validationExample(spec.querystring)],
      accepted,
    );
  }
  errors[429] = problemResponse(
    'The key’s rate limit is exhausted in one of its windows. A refused request does not count against either window.',
    [rateLimited(23).toProblem()],
    ['RetryAfter', ...accepted],
  );
  errors[503] = problemResponse(
    'The database is unreachable for the moment; retry after `Retry-After` seconds. Carries the rate-limit headers when the key had already been accepted.',
    [databaseUnavailable().toProblem()],
    ['RetryAfter', ...accepted],
  );

  // Only a JSON 200 carries an ETag (etag.ts): not the receipt operation's, which documents the
  // image a client following its redirect ends with.
  const ok = (spec.success as Record<number, { content?: Record<string, unknown> }>)[200];
  if (ok?.content?.['application/json']) {
    errors[304] = noBodyResponse(
      'Not modified: the request carried `If-None-Match` with the `ETag` this answer has now.',
      ['RequestId', 'ETag', ...accepted],
    );
  }

  const schema = {
    operationId: spec.operationId,
    summary: spec.summary,
    description: `${spec.description}\n\n${scopeSentence(scope)}`,
    tags: [spec.tag],
    security: [{ bearer: [] }],
    'x-required-scope': scope,
    // Every integer of a query is plain decimal digits (see query-keywords.ts).
    ...(spec.querystring
      ? { querystring: { ...spec.querystring, [PLAIN_INTEGERS_KEYWORD]: true } }
      : {}),
    ...(spec.params ? { params: spec.params } : {}),
    response: { ...spec.success, ...errors },
  };
  return {
    schema: schema as OperationSchema<Q, P, R>,
    config: {
      scope,
      cacheable: spec.cacheable ?? false,
      oneStatement: spec.oneStatement ?? false,
      queued: spec.queued ?? true,
    },
  };
}
