import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateOpenApiDocument, renderOpenApiDocument } from '../../src/openapi.ts';
import { useApi } from '../helpers/api.ts';
import { NOT_FOUND } from '../helpers/problems.ts';
import { company, employee, leave, leaveType } from '../helpers/records.ts';
import { assertRedoclyClean } from '../helpers/redocly.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMMITTED = `${ROOT}openapi.json`;

interface Parameter {
  in: string;
  name: string;
  description?: string;
  schema?: Json;
  example?: unknown;
  examples?: Record<string, unknown>;
}
interface Response {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, { schema: Json; examples?: Record<string, { value: Json }> }>;
}
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  'x-required-scope'?: string | null;
  parameters?: Parameter[];
  responses: Record<string, Response>;
}
type Json = Record<string, unknown>;
interface Document {
  openapi: string;
  info: { version: string; title: string; license?: Json };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Record<string, Json>;
  };
}

function readCommitted(): string {
  try {
    return readFileSync(COMMITTED, 'utf8');
  } catch (error) {
    throw new Error(`openapi.json cannot be read (${error}): run \`npm run openapi\``);
  }
}

const document = JSON.parse(readCommitted()) as Document;

const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
);
const byId = (operationId: string): Operation => {
  const found = operations.find((o) => o.operation.operationId === operationId);
  assert.ok(found, `no operation ${operationId}`);
  return found.operation;
};

/** Every operation a key is needed for: all of them but the signed file route. */
const SIGNED_FILE = 'getReceiptFile';
const authenticated = operations.filter((o) => o.operation.operationId !== SIGNED_FILE);

/** The scopes of docs/api.md: null means any valid key. */
const SCOPES: Record<string, string | null> = {
  getMe: null,
  listEmployees: null,
  getEmployee: null,
  listLeaves: 'leaves.read',
  getLeave: 'leaves.read',
  listLeaveTypes: 'leaves.read',
  listExpenses: 'expenses.read',
  getExpense: 'expenses.read',
  getExpenseReceipt: 'expenses.read',
  listExpenseCategories: 'expenses.read',
  listChanges: null,
};

const RATE_LIMIT_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

const headerNames = (response: Response | undefined) => Object.keys(response?.headers ?? {});

/** Every object inside `value`, depth first. */
function* objectsIn(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const item of value) yield* objectsIn(item);
  else if (typeof value === 'object' && value !== null) {
    yield value as Json;
    for (const child of Object.values(value)) yield* objectsIn(child);
  }
}

describe('openapi.json', () => {
  it('is the document the service generates from its route schemas', async () => {
    const generated = renderOpenApiDocument(await generateOpenApiDocument());
    assert.ok(
      readCommitted() === generated,
      'openapi.json differs from the document the routes generate: run `npm run openapi` and commit the result',
    );
  });

  it('is what GET /openapi.json serves', async (t) => {
    const api = await useApi(t, 'sqlite');
    const res = await api.get('/openapi.json', null);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, document);
  });

  it('passes `redocly lint` with the recommended rules: no errors, no warnings', () => {
    assertRedoclyClean('openapi.json');
  });

  it('is OpenAPI 3.1 for version 1.0.0 of the API, with a license, a server and the bearer scheme', () => {
    assert.match(document.openapi, /^3\.1\.\d+$/);
    assert.equal(document.info.version, '1.0.0');
    assert.deepEqual(document.info.license, {
      name: 'Proprietary',
      identifier: 'LicenseRef-Proprietary',
    });
    assert.deepEqual(document.servers, [{ url: '/api/company/v1', description: 'This service' }]);
    assert.deepEqual(document.components.securitySchemes.bearer, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'cdk_ API key',
      description: 'The company API key, created with `cdapi keys create`.',
    });
  });

  it('names the absolute server URL when PUBLIC_BASE_URL is set', async (t) => {
    const publicBaseUrl = 'https://api.example.com/api/company/v1';
    const api = await useApi(t, 'sqlite', { config: { publicBaseUrl } });
    const res = await api.get('/openapi.json', null);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json.servers, [{ url: publicBaseUrl, description: 'This service' }]);
    assert.deepEqual({ ...res.json, servers: document.servers }, document);
  });

  it('describes the API operations and nothing else: no openapi.json, 405 answers, HEAD or health checks', () => {
    assert.deepEqual(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort(), [
      'GET /changes',
      'GET /employees',
      'GET /employees/{id}',
      'GET /expense-categories',
      'GET /expenses',
      'GET /expenses/{id}',
      'GET /expenses/{id}/receipt',
      'GET /leave-types',
      'GET /leaves',
      'GET /leaves/{id}',
      'GET /me',
      'GET /receipt-files/{expenseId}/{variant}',
    ]);
  });
});

describe('operations', () => {
  it('each has a unique operationId, a summary, a description and a tag', () => {
    const ids = operations.map((o) => o.operation.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const { path, operation } of operations) {
      assert.ok(operation.summary, `${path}: summary`);
      assert.ok(operation.description, `${path}: description`);
      assert.equal(operation.tags?.length, 1, `${path}: tags`);
    }
  });

  it('each authenticated one needs the bearer key and names its scope in x-required-scope and its description', () => {
    assert.deepEqual(
      Object.fromEntries(
        authenticated.map((o) => [o.operation.operationId, o.operation['x-required-scope']]),
      ),
      SCOPES,
    );
    for (const { operation } of authenticated) {
      assert.deepEqual(operation.security, [{ bearer: [] }], operation.operationId);
      const scope = SCOPES[operation.operationId];
      assert.ok(
        operation.description?.includes(
          scope ? `**Scope:** \`${scope}\`` : '**Scope:** none; any valid API key',
        ),
        `${operation.operationId}: the description names the scope`,
      );
    }
  });

  it('each authenticated one answers 401, 403, 404, 429 and 503 as problems with their headers', () => {
    for (const { operation } of authenticated) {
      const { responses, operationId } = operation;
      for (const status of ['401', '403', '404', '429', '503']) {
        assert.ok(responses[status], `${operationId}: ${status}`);
      }
      assert.ok(headerNames(responses['401']).includes('WWW-Authenticate'), operationId);
      assert.ok(headerNames(responses['429']).includes('Retry-After'), operationId);
      assert.ok(headerNames(responses['503']).includes('Retry-After'), operationId);
      for (const name of RATE_LIMIT_HEADERS) {
        assert.ok(headerNames(responses['429']).includes(name), `${operationId}: 429 ${name}`);
      }
      const codes = Object.keys(
        responses['403']?.content?.['application/problem+json']?.examples ?? {},
      );
      // The change feed needs no scope, but naming a resource the key may not read is a 403.
      const scoped = SCOPES[operationId] || operationId === 'listChanges';
      assert.deepEqual(
        codes,
        scoped ? ['company_inactive', 'insufficient_scope'] : ['company_inactive'],
        operationId,
      );
    }
  });

  it('documents a record’s 404 where one is looked up, the 404 of a path beside it elsewhere, and 422 exactly where query parameters can be invalid', () => {
    const statuses = (statuses: string[]) =>
      operations
        .filter((o) => statuses.every((s) => s in o.operation.responses))
        .map((o) => o.operation.operationId)
        .sort();
    const notFoundCodes = (operation: (typeof operations)[number]['operation']) =>
      Object.keys(
        operation.responses['404']?.content?.['application/problem+json']?.examples ?? {},
      );
    const lookUps = operations
      .filter((o) => o.path.includes('{'))
      .map((o) => o.operation.operationId)
      .sort();
    assert.deepEqual(lookUps, [
      'getEmployee',
      'getExpense',
      'getExpenseReceipt',
      'getLeave',
      'getReceiptFile',
    ]);
    for (const { operation } of operations) {
      const description = operation.responses['404']?.description ?? '';
      if (lookUps.includes(operation.operationId)) {
        assert.doesNotMatch(description, /^Never/, operation.operationId);
      } else {
        assert.deepEqual(notFoundCodes(operation), ['not_found'], operation.operationId);
        assert.match(description, /^Never for this path itself/, operation.operationId);
      }
    }
    assert.deepEqual(statuses(['422']), [
      'getExpenseReceipt',
      'getReceiptFile',
      'listChanges',
      'listEmployees',
      'listExpenses',
      'listLeaves',
    ]);
    for (const { operation } of operations) {
      const hasQuery = (operation.parameters ?? []).some((p) => p.in === 'query');
      assert.equal('422' in operation.responses, hasQuery, operation.operationId);
    }
  });

  it('gives every response X-Request-Id, and every authenticated success the rate-limit headers', () => {
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(
          headerNames(response).includes('X-Request-Id'),
          `${operation.operationId} ${status}`,
        );
      }
    }
    for (const { operation } of authenticated) {
      // The receipt operation's own answer is its 302; its 200 is the signed URL's image.
      const own = operation.operationId === 'getExpenseReceipt' ? '302' : '200';
      const success = operation.responses[own];
      assert.deepEqual(
        headerNames(success)
          .filter((name) => RATE_LIMIT_HEADERS.includes(name))
          .sort(),
        [...RATE_LIMIT_HEADERS].sort(),
        operation.operationId,
      );
      assert.ok(headerNames(success).includes('Cache-Control'), operation.operationId);
    }
  });

  it('refers every header to the one component that explains it', () => {
    for (const { operation } of operations) {
      for (const response of Object.values(operation.responses)) {
        for (const header of Object.values(response.headers ?? {})) {
          const name = header.$ref.replace('#/components/headers/', '');
          assert.ok(document.components.headers[name], header.$ref);
        }
      }
    }
  });

  it('documents the receipt redirect as a body-less 302 with Location and Cache-Control', () => {
    const { responses } = byId('getExpenseReceipt');
    assert.deepEqual(Object.keys(responses), [
      '200',
      '302',
      '400',
      '401',
      '403',
      '404',
      '422',
      '429',
      '503',
    ]);
    assert.equal(responses['302']?.content, undefined);
    assert.deepEqual(responses['302']?.headers?.Location, {
      $ref: '#/components/headers/ReceiptLocation',
    });
    assert.deepEqual(responses['302']?.headers?.['Cache-Control'], {
      $ref: '#/components/headers/CacheControlNoStore',
    });
    assert.deepEqual(document.components.headers.CacheControlNoStore?.schema, {
      type: 'string',
      enum: ['no-store'],
    });
  });

  it('documents, for clients that follow the redirect, the image they end with as the 200', () => {
    const { responses } = byId('getExpenseReceipt');
    assert.match(responses['200']?.description ?? '', /follows redirects/);
    assert.match(responses['200']?.description ?? '', /The service itself answers 302/);
    assert.deepEqual(responses['200']?.content, byId(SIGNED_FILE).responses['200']?.content);
    assert.deepEqual(responses['200']?.headers, byId(SIGNED_FILE).responses['200']?.headers);
  });

  it('documents the signed file route without security: the image bytes, 304, 403 invalid_signature or company_inactive, 404', () => {
    const operation = byId(SIGNED_FILE);
    assert.deepEqual(operation.security, []);
    assert.equal(operation['x-required-scope'], undefined);
    assert.deepEqual(Object.keys(operation.responses), [
      '200',
      '304',
      '400',
      '403',
      '404',
      '422',
      '503',
    ]);
    const image = operation.responses['200'];
    assert.deepEqual(Object.keys(image?.content ?? {}), [
      'image/jpeg',
      'image/png',
      'image/webp',
      'image/heic',
      'image/avif',
      'image/tiff',
    ]);
    assert.deepEqual(image?.content?.['image/jpeg']?.schema, { type: 'string', format: 'binary' });
    assert.deepEqual(headerNames(image), [
      'X-Request-Id',
      'Cache-Control',
      'ETag',
      'Content-Length',
      'Content-Disposition',
    ]);
    assert.equal(operation.responses['304']?.content, undefined);
    assert.deepEqual(
      Object.keys(
        operation.responses['403']?.content?.['application/problem+json']?.examples ?? {},
      ),
      ['invalid_signature', 'company_inactive'],
    );
  });
});

describe('parameters', () => {
  it('each path and query parameter has a schema, and an example in words the reference page does not prefill', () => {
    for (const { operation } of operations) {
      for (const parameter of operation.parameters ?? []) {
        const where = `${operation.operationId} ${parameter.in} ${parameter.name}`;
        assert.ok(['path', 'query'].includes(parameter.in), where);
        assert.ok(parameter.schema?.type, `${where}: schema with a type`);
        // Swagger UI's "Try it out" fills a parameter with its example, filtering the first
        // answer down to nothing: examples are part of the description instead.
        assert.equal(parameter.example, undefined, `${where}: example`);
        assert.equal(parameter.examples, undefined, `${where}: examples`);
        assert.equal(parameter.schema?.example, undefined, `${where}: schema example`);
        assert.equal(parameter.schema?.examples, undefined, `${where}: schema examples`);
        if (parameter.name !== 'variant') {
          assert.match(parameter.description ?? '', / Example: `[^`]+`\.$/, where);
        }
      }
    }
  });

  it('types every path id as an integer, as the records carry it', () => {
    const ids = operations.flatMap(({ operation }) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === 'path' && p.name !== 'variant')
        .map((p) => [`${operation.operationId} ${p.name}`, p.schema]),
    );
    assert.deepEqual(ids, [
      ['getEmployee id', { type: 'integer', minimum: 1 }],
      ['getLeave id', { type: 'integer', minimum: 1 }],
      ['getExpense id', { type: 'integer', minimum: 1 }],
      ['getExpenseReceipt id', { type: 'integer', minimum: 1 }],
      ['getReceiptFile expenseId', { type: 'integer', minimum: 1 }],
    ]);
    for (const [where, schema] of ids) {
      const record = /^get(Employee|Leave|Expense)\b/.exec(String(where))?.[1];
      if (!record) continue;
      assert.deepEqual(
        (document.components.schemas[record]?.properties as Json | undefined)?.id,
        { type: 'integer' },
        `${where}: the record's id has the path id's type ${JSON.stringify(schema)}`,
      );
    }
  });

  it('declares every comma list as an array sent as one `name=a,b` (style form, explode false)', () => {
    const lists = operations.flatMap(({ operation }) =>
      (operation.parameters ?? [])
        .filter((p) => p.schema?.type === 'array')
        .map((p) => ({
          where: `${operation.operationId} ${p.name}`,
          style: (p as { style?: string }).style,
          explode: (p as { explode?: boolean }).explode,
          items: p.schema?.items,
          maxItems: p.schema?.maxItems,
        })),
    );
    const form = { style: 'form', explode: false };
    const valueList = (where: string, ...values: string[]) => ({
      where,
      ...form,
      items: { type: 'string', enum: values },
      maxItems: undefined,
    });
    const idList = (where: string) => ({
      where,
      ...form,
      items: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      maxItems: 100,
    });
    assert.deepEqual(lists, [
      valueList('listEmployees status', 'active', 'inactive', 'terminated'),
      valueList('listLeaves status', 'pending', 'approved', 'rejected', 'cancelled'),
      idList('listLeaves employee_id'),
      idList('listLeaves leave_type_id'),
      valueList('listExpenses status', 'pending', 'approved', 'rejected', 'paid', 'cancelled'),
      idList('listExpenses employee_id'),
      idList('listExpenses category_id'),
      valueList(
        'listChanges resources',
        'employee',
        'leave_type',
        'leave',
        'expense_category',
        'expense',
      ),
    ]);
  });

  it('declares the limits and defaults the validator enforces', () => {
    const parameter = (operationId: string, name: string) =>
      byId(operationId).parameters?.find((p) => p.name === name);
    assert.deepEqual(parameter('listLeaves', 'per_page')?.schema, {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 25,
      'x-error-message': 'must be an integer from 1 to 100 in plain decimal digits',
    });
    assert.deepEqual(parameter('listExpenses', 'sort')?.schema?.enum, [
      'id',
      'expense_date',
      'amount',
      'created_at',
      'updated_at',
      '-id',
      '-expense_date',
      '-amount',
      '-created_at',
      '-updated_at',
    ]);
    assert.deepEqual(parameter('getExpenseReceipt', 'variant')?.schema?.enum, [
      'processed',
      'original',
    ]);
    assert.equal(parameter('listEmployees', 'search')?.schema?.maxLength, 100);
    assert.equal(parameter('listLeaves', 'updated_since')?.schema?.format, 'date-time');
    assert.deepEqual(parameter('getLeave', 'id')?.schema, { type: 'integer', minimum: 1 });
  });

  it('says where a date range is refused: from after to is a 422, in both parameters and the 422 answer', () => {
    const ranged = operations.filter(({ operation }) =>
      (operation.parameters ?? []).some((p) => p.name === 'from'),
    );
    assert.deepEqual(
      ranged.map((o) => o.operation.operationId),
      ['listLeaves', 'listExpenses'],
    );
    for (const { operation } of ranged) {
      for (const name of ['from', 'to']) {
        const description = operation.parameters?.find((p) => p.name === name)?.description ?? '';
        assert.match(
          description,
          /a `from` after `to` is a 422 naming both/,
          `${operation.operationId} ${name}`,
        );
      }
      assert.match(
        operation.responses['422']?.description ?? '',
        /A `from` after `to` is invalid too/,
        operation.operationId,
      );
    }
  });
});

describe('the service, sent what the document declares', () => {
  it('reads an array sent as `name=a,b` (literal or encoded comma) and an integer path id', async (t) => {
    const api = await useApi(t, 'sqlite', {
      records: [
        company(1),
        employee(1, 10),
        employee(1, 11),
        employee(1, 12),
        leaveType(1, 1),
        leave(1, 100, 10, 1, { status: 'approved' }),
        leave(1, 101, 11, 1, { status: 'pending' }),
        leave(1, 102, 12, 1, { status: 'rejected' }),
      ],
    });
    const key = await api.createKey(1);
    const ids = async (query: string) => {
      const res = await api.get(`/leaves?${query}`, key);
      assert.equal(res.status, 200, `${query}: ${res.body}`);
      return res.json.data.map((record: { id: number }) => record.id);
    };
    assert.deepEqual(await ids('status=approved,pending'), [100, 101]);
    assert.deepEqual(await ids('status=approved%2Cpending'), [100, 101]);
    assert.deepEqual(await ids('status=rejected'), [102]);
    assert.deepEqual(await ids('employee_id=10,12'), [100, 102]);
    assert.deepEqual(await ids('employee_id=10%2C12&status=rejected'), [102]);
    assert.equal((await api.get('/leaves/101', key)).json.data.id, 101);
    // The path id is still read as text: only plain digits name a record.
    for (const id of ['1e2', '+101', '0101', '101.0']) {
      const res = await api.get(`/leaves/${id}`, key);
      assert.equal(res.status, 404, id);
      assert.deepEqual(res.json, NOT_FOUND, id);
    }
  });
});

describe('components', () => {
  const MODELS = [
    'Problem',
    'PaginationMeta',
    'Me',
    'EmployeeSummary',
    'Employee',
    'Leave',
    'LeaveDetail',
    'LeaveType',
    'Expense',
    'ExpenseDetail',
    'ExpenseCategory',
    'Change',
  ];

  it('holds each shared model once, and the operations refer to it instead of repeating it', () => {
    assert.deepEqual(Object.keys(document.components.schemas), MODELS);
    const text = JSON.stringify(document);
    for (const model of MODELS) {
      assert.ok(text.includes(`"#/components/schemas/${model}"`), `${model} is referenced`);
      const keys = Object.keys(document.components.schemas[model]?.properties ?? {}).join();
      const copies = [...objectsIn(document)].filter(
        (o) => o.properties && Object.keys(o.properties).join() === keys,
      );
      assert.equal(copies.length, 1, `${model} is defined once`);
    }
  });

  it('makes exactly the fields that can be null nullable', () => {
    const isNullable = (schema: Json) =>
      (Array.isArray(schema.type) && schema.type.includes('null')) ||
      (Array.isArray(schema.anyOf) && schema.anyOf.some((s: Json) => s.type === 'null'));
    const nullableFields = (schema: Json, prefix = ''): string[] =>
      Object.entries((schema.properties ?? {}) as Record<string, Json>).flatMap(([name, s]) => [
        ...(isNullable(s) ? [`${prefix}${name}`] : []),
        ...nullableFields(s, `${prefix}${name}.`),
      ]);
    const LEAVE = [
      'start_time',
      'end_time',
      'hours',
      'reason',
      'rejection_reason',
      'substitute_employee',
      'approved_at',
    ];
    const EXPENSE = ['description', 'receipt_url', 'approved_at', 'paid_at', 'rejected_reason'];
    assert.deepEqual(
      Object.fromEntries(
        MODELS.map((model) => [model, nullableFields(document.components.schemas[model] ?? {})]),
      ),
      {
        Problem: [],
        PaginationMeta: ['from', 'to'],
        Me: [],
        EmployeeSummary: [],
        Employee: [],
        Leave: LEAVE,
        LeaveDetail: [...LEAVE, 'document.deadline', 'document.obligation_status'],
        LeaveType: ['description'],
        Expense: EXPENSE,
        ExpenseDetail: [...EXPENSE, 'receipt'],
        ExpenseCategory: ['description', 'max_amount'],
        Change: ['record'],
      },
    );
    assert.doesNotMatch(JSON.stringify(document), /"nullable"/);
  });

  it('describes every error with the one Problem schema, as application/problem+json', () => {
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const where = `${operation.operationId} ${status}`;
        assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], where);
        const media = response.content?.['application/problem+json'];
        assert.deepEqual(media?.schema, { $ref: '#/components/schemas/Problem' }, where);
        for (const example of Object.values(media?.examples ?? {})) {
          assert.equal(example.value.status, Number(status), where);
        }
      }
    }
  });
});
