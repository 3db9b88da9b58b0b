import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import {
  type CheckedResponse,
  createContractChecker,
  type OpenApiDocument,
} from '../helpers/contract.ts';

const PREFIX = '/api/company/v1';
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** A tiny document in the shape the app serves: shared models under components, by `$ref`. */
const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Test', version: '1' },
  servers: [{ url: PREFIX }],
  paths: {
    '/leaves': {
      get: {
        responses: {
          200: {
            description: 'A page of leaves',
            headers: {
              RateLimit: { required: true, schema: { type: 'string' } },
              'X-RateLimit-Remaining': { $ref: '#/components/headers/Remaining' },
              'Retry-After': { schema: { type: 'integer' } },
            },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['data'],
                  properties: {
                    data: { type: 'array', items: { $ref: '#/components/schemas/Leave' } },
                  },
                },
              },
            },
          },
          401: { $ref: '#/components/responses/Unauthenticated' },
        },
      },
    },
    '/leaves/{id}': {
      get: {
        responses: {
          200: {
            description: 'One leave',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['data'],
                  properties: { data: { $ref: '#/components/schemas/Leave' } },
                },
              },
            },
          },
          404: problemResponse('No such leave'),
        },
      },
    },
    '/leaves/summary': {
      get: {
        responses: {
          200: {
            description: 'Counts',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['total'],
                  properties: { total: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
    },
    '/receipts/{id}': {
      get: {
        responses: {
          302: {
            description: 'Redirect to the image',
            headers: { Location: { required: true, schema: { type: 'string', format: 'uri' } } },
          },
          200: { description: 'The image', content: { 'image/*': { schema: { type: 'string' } } } },
          default: problemResponse('Any other error'),
        },
      },
    },
  },
  components: {
    schemas: {
      Leave: {
        type: 'object',
        required: ['id', 'status', 'start_date'],
        properties: {
          id: { type: 'integer' },
          status: { enum: ['approved', 'pending'] },
          start_date: { type: 'string', format: 'date' },
          note: { type: ['string', 'null'] },
        },
        additionalProperties: false,
      },
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'code'],
        properties: {
          type: { type: 'string' },
          title: { type: 'string' },
          status: { type: 'integer' },
          code: { type: 'string' },
        },
      },
    },
    headers: {
      Remaining: { required: true, schema: { type: 'integer', minimum: 0 } },
    },
    responses: { Unauthenticated: problemResponse('No valid key') },
  },
};

const leave = { id: 7, status: 'approved', start_date: '2026-03-02', note: null };
const leaveList = JSON.stringify({ data: [leave] });
const rateHeaders = { ratelimit: 'limit=60, remaining=59, reset=1', 'x-ratelimit-remaining': '59' };
const problem = (status: number, code: string) =>
  JSON.stringify({ type: 'about:blank', title: 'Error', status, code });

const checker = createContractChecker(document);

/** A conforming GET /leaves answer; each case changes one thing. */
function listResponse(overrides: Partial<CheckedResponse> = {}): CheckedResponse {
  return {
    method: 'GET',
    path: `${PREFIX}/leaves?page=2`,
    status: 200,
    headers: { 'content-type': JSON_TYPE, ...rateHeaders },
    body: leaveList,
    ...overrides,
  };
}

/** The single problem a check finds; fails unless there is exactly one. */
function onlyProblem(response: CheckedResponse): string {
  const problems = checker.check(response);
  assert.equal(problems.length, 1, `expected one problem, got: ${JSON.stringify(problems)}`);
  return problems[0] as string;
}

describe('createContractChecker', () => {
  describe('a conforming response', () => {
    it('has no problems', () => {
      assert.deepEqual(checker.check(listResponse()), []);
    });

    it('has no problems when the Content-Type carries no charset', () => {
      const headers = { 'content-type': 'application/json', ...rateHeaders };
      assert.deepEqual(checker.check(listResponse({ headers })), []);
    });

    it('has no problems when the body arrives gzipped', () => {
      const headers = { 'content-type': JSON_TYPE, 'content-encoding': 'gzip', ...rateHeaders };
      assert.deepEqual(checker.check(listResponse({ headers, body: gzipSync(leaveList) })), []);
      const head = { method: 'HEAD', headers, body: Buffer.alloc(0) };
      assert.deepEqual(checker.check(listResponse(head)), []);
      assert.match(
        onlyProblem(listResponse({ headers, body: Buffer.from(leaveList) })),
        /^GET \/leaves 200: the body cannot be decoded as gzip: /,
      );
    });

    it('checks HEAD like GET, without a body', () => {
      assert.deepEqual(checker.check(listResponse({ method: 'HEAD', body: '' })), []);
      assert.match(
        onlyProblem(listResponse({ method: 'HEAD', body: '', status: 500 })),
        /^HEAD \/leaves: status 500 is not declared \(declared: 200, 401\)$/,
      );
    });
  });

  describe('the body', () => {
    it('is a problem when a property has the wrong type', () => {
      const body = JSON.stringify({ data: [{ ...leave, id: '7' }] });
      assert.match(
        onlyProblem(listResponse({ body })),
        /^GET \/leaves 200: body does not match the schema: \/data\/0\/id must be integer/,
      );
    });

    it('is a problem when a required property is missing', () => {
      const { start_date: _, ...withoutDate } = leave;
      assert.match(
        onlyProblem(listResponse({ body: JSON.stringify({ data: [withoutDate] }) })),
        /\/data\/0 must have required property 'start_date'/,
      );
    });

    it('is a problem when the whole body has the wrong type', () => {
      assert.match(
        onlyProblem(listResponse({ body: JSON.stringify([leave]) })),
        /\(root\) must be object/,
      );
    });

    it('checks formats', () => {
      const body = JSON.stringify({ data: [{ ...leave, start_date: '2026-02-30' }] });
      assert.match(
        onlyProblem(listResponse({ body })),
        /\/data\/0\/start_date must match format "date"/,
      );
    });

    it('is a problem when it is not JSON', () => {
      assert.match(onlyProblem(listResponse({ body: '<html>' })), /body is not JSON: <html>/);
    });

    it('is a problem when it is empty but content is declared', () => {
      assert.match(
        onlyProblem(listResponse({ body: '', headers: rateHeaders })),
        /^GET \/leaves 200: empty body, but the document declares application\/json$/,
      );
    });

    it('is a problem when content is sent where none is declared', () => {
      const headers = { 'content-type': JSON_TYPE, location: 'https://files.example/r/1.jpg' };
      assert.match(
        onlyProblem({
          method: 'GET',
          path: `${PREFIX}/receipts/1`,
          status: 302,
          headers,
          body: '{}',
        }),
        /^GET \/receipts\/\{id\} 302: a application\/json; charset=utf-8 body, but the document declares no content$/,
      );
    });
  });

  describe('the status', () => {
    it('is a problem when the operation does not declare it', () => {
      const body = problem(429, 'rate_limited');
      assert.equal(
        onlyProblem(listResponse({ status: 429, headers: { 'content-type': PROBLEM_TYPE }, body })),
        'GET /leaves: status 429 is not declared (declared: 200, 401)',
      );
    });

    it('falls back to default when it is declared', () => {
      const response: CheckedResponse = {
        method: 'GET',
        path: `${PREFIX}/receipts/1`,
        status: 403,
        headers: { 'content-type': PROBLEM_TYPE },
        body: problem(403, 'invalid_signature'),
      };
      assert.deepEqual(checker.check(response), []);
      assert.match(
        onlyProblem({ ...response, body: '{"code":"invalid_signature"}' }),
        /^GET \/receipts\/\{id\} 403: body does not match the schema: \(root\) must have required property 'type'/,
      );
    });
  });

  describe('the Content-Type', () => {
    it('is a problem when the response does not declare it', () => {
      assert.equal(
        onlyProblem(listResponse({ headers: { 'content-type': 'text/plain', ...rateHeaders } })),
        'GET /leaves 200: Content-Type text/plain is not declared (declared: application/json)',
      );
    });

    it('matches a declared media type range', () => {
      const image = { method: 'GET', path: `${PREFIX}/receipts/1`, status: 200, body: 'JFIF' };
      assert.deepEqual(checker.check({ ...image, headers: { 'content-type': 'image/jpeg' } }), []);
      assert.match(
        onlyProblem({ ...image, headers: { 'content-type': 'application/pdf' } }),
        /Content-Type application\/pdf is not declared \(declared: image\/\*\)/,
      );
    });

    it('is a problem when a body comes without one', () => {
      assert.match(
        onlyProblem(listResponse({ headers: rateHeaders })),
        /^GET \/leaves 200: a body without a Content-Type$/,
      );
    });
  });

  describe('the headers', () => {
    it('is a problem when a required header is missing', () => {
      const headers = { 'content-type': JSON_TYPE, 'x-ratelimit-remaining': '59' };
      assert.equal(
        onlyProblem(listResponse({ headers })),
        'GET /leaves 200: header RateLimit is missing',
      );
    });

    it('reads an integer header from its string value', () => {
      const headers = { 'content-type': JSON_TYPE, ...rateHeaders };
      for (const [value, conforms] of [
        ['0', true],
        ['59', true],
        ['-1', false],
        ['1.5', false],
        ['many', false],
        ['', false],
      ] as const) {
        const problems = checker.check(
          listResponse({ headers: { ...headers, 'x-ratelimit-remaining': value } }),
        );
        assert.equal(problems.length, conforms ? 0 : 1, `${value}: ${problems.join('; ')}`);
        if (!conforms) assert.match(problems[0] as string, /header X-RateLimit-Remaining: /);
      }
    });

    it('checks a header against its schema, formats included', () => {
      const redirect = { method: 'GET', path: `${PREFIX}/receipts/1`, status: 302, body: '' };
      assert.deepEqual(
        checker.check({ ...redirect, headers: { location: 'https://x.test/1' } }),
        [],
      );
      assert.match(
        onlyProblem({ ...redirect, headers: { location: 'not a url' } }),
        /^GET \/receipts\/\{id\} 302: header Location: "not a url" does not match its schema: \(root\) must match format "uri"/,
      );
      assert.match(onlyProblem({ ...redirect, headers: {} }), /header Location is missing$/);
    });

    it('lets an optional header be absent, but checks it when present', () => {
      assert.deepEqual(checker.check(listResponse()), []);
      const headers = { 'content-type': JSON_TYPE, ...rateHeaders, 'retry-after': 'soon' };
      assert.match(onlyProblem(listResponse({ headers })), /header Retry-After: "soon" does not/);
    });

    it('matches header names whatever their case', () => {
      const headers = { 'Content-Type': JSON_TYPE, RATELIMIT: 'x', 'X-RateLimit-Remaining': 1 };
      assert.deepEqual(checker.check(listResponse({ headers })), []);
    });
  });

  describe('$ref resolution', () => {
    it('resolves a shared response and its schema', () => {
      const response = listResponse({
        status: 401,
        headers: { 'content-type': PROBLEM_TYPE },
        body: problem(401, 'unauthenticated'),
      });
      assert.deepEqual(checker.check(response), []);
      assert.match(
        onlyProblem({ ...response, body: JSON.stringify({ type: 'about:blank', title: 'x' }) }),
        /^GET \/leaves 401: body does not match the schema: \(root\) must have required property 'status'.*must have required property 'code'/,
      );
    });

    it('resolves a shared schema, with its own constraints', () => {
      const body = JSON.stringify({ data: { ...leave, status: 'lost', extra: 1 } });
      const found = onlyProblem({
        method: 'GET',
        path: `${PREFIX}/leaves/7`,
        status: 200,
        headers: { 'content-type': JSON_TYPE },
        body,
      });
      assert.match(found, /\/data\/status must be equal to one of the allowed values/);
      assert.match(found, /\/data must NOT have additional properties/);
    });

    it('resolves shared schemas that carried an $id', () => {
      const withIds = createContractChecker({
        servers: [{ url: PREFIX }],
        paths: {
          '/me': {
            get: {
              responses: {
                200: {
                  description: 'Me',
                  content: { 'application/json': { schema: { $ref: 'Me' } } },
                },
              },
            },
          },
        },
        components: {
          schemas: {
            Me: {
              $id: 'Me',
              type: 'object',
              required: ['company'],
              properties: { company: { $ref: '#/components/schemas/Company' } },
            },
            Company: { $id: 'Company', type: 'object', required: ['id'] },
          },
        },
      });
      const me = {
        method: 'GET',
        path: `${PREFIX}/me`,
        status: 200,
        headers: { 'content-type': JSON_TYPE },
      };
      assert.deepEqual(withIds.check({ ...me, body: '{"company":{"id":1}}' }), []);
      assert.match(
        withIds.check({ ...me, body: '{"company":{}}' }).join('\n'),
        /\/company must have required property 'id'/,
      );
    });
  });

  describe('path templates', () => {
    const one = (path: string, body: unknown) => ({
      method: 'GET',
      path: `${PREFIX}${path}`,
      status: 200,
      headers: { 'content-type': JSON_TYPE },
      body: JSON.stringify(body),
    });

    it('matches a parameter segment', () => {
      assert.deepEqual(checker.check(one('/leaves/42', { data: leave })), []);
      assert.match(onlyProblem(one('/leaves/42', { total: 1 })), /^GET \/leaves\/\{id\} 200:/);
    });

    it('prefers a literal segment over a parameter', () => {
      assert.deepEqual(checker.check(one('/leaves/summary', { total: 3 })), []);
      assert.match(
        onlyProblem(one('/leaves/summary', { data: leave })),
        /^GET \/leaves\/summary 200:/,
      );
    });

    it('checks the status of an undeclared answer on a documented path', () => {
      assert.equal(
        onlyProblem({ ...one('/leaves/abc', {}), status: 422 }),
        'GET /leaves/{id}: status 422 is not declared (declared: 200, 404)',
      );
    });

    it('skips paths the document does not describe', () => {
      const unknown = { status: 404, headers: { 'content-type': 'text/plain' }, body: 'nope' };
      for (const path of [
        '/healthz',
        '/readyz',
        '/docs/static/index.html',
        `${PREFIX}/nothing-here`,
        `${PREFIX}/leaves/7/extra`,
        `${PREFIX}/leaves/`,
        `${PREFIX}`,
        '/leaves',
      ]) {
        assert.deepEqual(checker.check({ ...unknown, method: 'GET', path }), [], path);
      }
    });

    it('skips methods other than GET and HEAD', () => {
      for (const method of ['POST', 'DELETE', 'OPTIONS']) {
        const refused = { method, status: 405, headers: { 'content-type': PROBLEM_TYPE } };
        const body = problem(405, 'method_not_allowed');
        assert.deepEqual(checker.check({ ...refused, path: `${PREFIX}/leaves`, body }), []);
      }
    });
  });
});
