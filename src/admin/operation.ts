import type { TSchema } from 'typebox';
import { Type } from 'typebox';
import { AdminProblemSchema } from '../schemas/admin.ts';
import { ref } from '../schemas/common.ts';
import { PROBLEM_CONTENT_TYPE } from '../schemas/problems.ts';

/** The admin API's operation groups, in the order its document lists them. */
export const ADMIN_TAGS = [
  { name: 'Companies', description: 'Companies: list, status, import, purge.' },
  {
    name: 'Keys',
    description: 'A company’s API keys: create (the raw key shown once), list, revoke.',
  },
];

type AdminTag = 'Companies' | 'Keys';

/** What each error status of the admin API means. */
const ERROR_RESPONSES = {
  400: 'The body cannot be read: it does not decode as its Content-Encoding says, or (JSON) its bytes are not UTF-8 or its text is not JSON (`bad_request`).',
  401: 'The admin token is missing or wrong (`unauthenticated`).',
  404: 'No company or key with this id (`not_found`).',
  413: 'The JSON body is over 1 MiB (`content_too_large`).',
  415: 'The body is not of the type the operation reads, or its Content-Encoding is not gzip, deflate or br (`unsupported_media_type`).',
  422: 'The body is invalid (`validation_failed`, naming each field; `import_failed`, naming the line and field).',
  429: 'Too many failed admin tokens from this address (`rate_limited`, with `Retry-After`).',
  503: 'The database is unreachable (`service_unavailable`).',
} as const;

type ErrorStatus = keyof typeof ERROR_RESPONSES;

function problemResponse(status: ErrorStatus) {
  return {
    description: ERROR_RESPONSES[status],
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ref(AdminProblemSchema) } },
  };
}

/** `{data: …}`: every admin answer wraps its result, as the API's do. */
export const dataOf = <T extends TSchema>(schema: T) => Type.Object({ data: schema });

interface AdminOperationSpec<P, B> {
  operationId: string;
  summary: string;
  description: string;
  tag: AdminTag;
  params?: P;
  body?: B;
  /** Takes no body or `{}` (refuseUndeclaredBody): a body it cannot read is 400, 413 or 415. */
  emptyBody?: true;
  /** The success status, what it means and its body's schema. */
  success: [status: 200 | 201, description: string, schema: TSchema];
  /** Besides 401, 429 and 503, which every authenticated operation can answer, and 400, 413 and 415 for a JSON body. */
  errors?: ErrorStatus[];
  /** Extra OpenAPI fields of the operation (e.g. an NDJSON request body). */
  extra?: Record<string, unknown>;
}

/** The route schema of an authenticated admin operation: validation, serialization, document. */
export function adminOperation<P extends TSchema, B extends TSchema>(
  spec: AdminOperationSpec<P, B>,
) {
  const [status, description, schema] = spec.success;
  const unreadable = spec.body || spec.emptyBody ? [400, 413, 415] : [];
  const errors = [...unreadable, 401, ...(spec.errors ?? []), 429, 503] as ErrorStatus[];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    security: [{ adminToken: [] }],
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    ...spec.extra,
    response: {
      [status]: { description, content: { 'application/json': { schema } } },
      ...Object.fromEntries(errors.map((code) => [code, problemResponse(code)])),
    },
  } as {
    params: P;
    body: B;
    response: Record<number, unknown>;
  };
}
