import assert from 'node:assert/strict';
import { METHODS } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it, type TestContext } from 'node:test';
import fc from 'fast-check';
import type { Dialect } from '../../src/db/connect.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { ERRORS, type ErrorCode, PROBLEM_CONTENT_TYPE } from '../../src/schemas/problems.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { type RawResponse, rawGet, rawRequest } from '../helpers/raw-http.ts';
import { canaries, expense, smallCompany, writeJpeg } from '../helpers/records.ts';

/**
 * Fuzzing over real HTTP: random, Unicode, huge, negative, repeated, percent-encoded and
 * NUL-containing values in every query parameter the OpenAPI document declares (and unknown
 * ones), in every path segment, and in headers, sent as raw bytes so no client cleans them
 * up first. Every answer must be below 500 and, when it is an error, problem+json with a
 * known code whose status is that code's own; the service must answer normally afterwards.
 * Where the contract fixes the answer, it is asserted exactly: every integer parameter written
 * in anything but plain decimal digits (non-finite, exponent, hex, signs, spaces, other
 * scripts) is a 422 naming it, and every method but GET and HEAD (TRACE, PROPFIND, SEARCH,
 * MKCOL, LOCK, QUERY, CONNECT, …) is a 405 on a known path and a 404 elsewhere.
 *
 * Seeded: FC_SEED=… reproduces a run; FUZZ_RUNS sets the number of requests per database.
 */

const SEED = Number(process.env.FC_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

/** Values chosen to hit parsers' edges: numbers, dates, lists, encodings, injection. */
const EDGE_VALUES = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  ' 1',
  '01',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '1E2',
  '0b11',
  '0o7',
  '10.0',
  '5.',
  '1_0',
  '５',
  '٥',
  '9007199254740993',
  '99999999999999999999999999999999',
  ',',
  '1,',
  ',1',
  '1,,2',
  '1, 2',
  'approved,',
  'approved,,pending',
  ' approved , pending ',
  '2026-02-30',
  '2026-13-01',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '10000-01-01',
  '2026-1-1',
  '2026-03-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59-14:00',
  '0001-01-01T00:00:00+14:00',
  '2026-03-01T25:00:00Z',
  'true',
  'null',
  '[]',
  '{}',
  '%',
  '%%',
  '%00',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%ED%A0%80',
  '\u0000',
  'a\u0000b',
  "' or 1=1 --",
  '"; drop table employees; --',
  '\\',
  '*',
  '_',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  'original',
  'processed',
  '-id',
  '--id',
  '-',
  'amount',
  '-amount',
];

/** Parameter names besides the declared ones: unknown, prototype-polluting, array syntax. */
const EXTRA_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'page[]',
  'status[0]',
  'a[b]',
  '',
  'x',
  'per_page ',
  'PAGE',
  'signature',
  'company',
  'expires',
];

/** Every printable and unprintable character a value can carry, and many of them. */
const anyValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_VALUES) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  {
    weight: 1,
    arbitrary: fc.array(fc.integer({ min: -5, max: 2_000_000 }), { maxLength: 150 }).map(String),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 100, maxLength: 4000 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...EDGE_VALUES), fc.nat(400)).map(([v, n]) => v.repeat(n)),
  },
);

/** How a value goes on the wire: encoded as a browser would, raw UTF-8 bytes, or raw bytes. */
const encoding = fc.oneof(
  { weight: 6, arbitrary: fc.constant('component') },
  { weight: 2, arbitrary: fc.constant('percent-bytes') },
  { weight: 1, arbitrary: fc.constant('raw') },
);

function encodeAs(value: string, how: string): string {
  if (how === 'raw') return value;
  const bytes = Buffer.from(value, 'utf8');
  if (how === 'percent-bytes') return [...bytes].map((b) => `%${b.toString(16)}`).join('');
  // encodeURIComponent throws on a lone surrogate; the UTF-8 bytes never do.
  return [...bytes]
    .map((b) =>
      /[A-Za-z0-9\-_.!~*'()]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** Operations served outside the API prefix, which the document does not list. */
const OUTSIDE_API = ['/healthz', '/readyz'];

interface Operation {
  /** The path template, e.g. /employees/{id}, relative to the API prefix when under it. */
  template: string;
  query: string[];
  /** The query parameters the document declares as integers. */
  integers: string[];
}

interface DocumentParameter {
  name: string;
  in: string;
  schema?: { type?: string };
}

/** Every GET operation of the served OpenAPI document, with its query parameter names. */
async function operationsOf(api: TestApi): Promise<Operation[]> {
  const document = (await api.get('/openapi.json')).json as {
    paths: Record<string, { get?: { parameters?: DocumentParameter[] } }>;
  };
  return Object.entries(document.paths).flatMap(([template, item]) => {
    if (!item.get) return [];
    const query = (item.get.parameters ?? []).filter((p) => p.in === 'query');
    return [
      {
        template,
        query: query.map((p) => p.name),
        integers: query.filter((p) => p.schema?.type === 'integer').map((p) => p.name),
      },
    ];
  });
}

/** An operation's path with every path parameter filled in with a plain, valid value. */
const pathOf = (op: Operation, id = '1') =>
  `${API_PREFIX}${op.template.replace(/\{(\w+)\}/g, (_, name) => (name === 'variant' ? 'original' : id))}`;

/**
 * An integer in its valid range written as anything but plain decimal digits: in JavaScript's
 * other notations, with a sign, a fraction of zero, spaces, other scripts' digits, or not
 * finite. Every one is a 422 naming the parameter.
 */
const notPlainInteger: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('Infinity', '-Infinity', 'NaN', '1e400', '-1e400', '1e-400'),
  fc.integer({ min: 1, max: 100 }).chain((n) =>
    fc.constantFrom(
      `${n}e0`,
      `${n * 10}E-1`,
      `${n}.0`,
      `${n}.`,
      `+${n}`,
      `-0${n}`,
      `0x${n.toString(16)}`,
      `0X${n.toString(16).toUpperCase()}`,
      `0b${n.toString(2)}`,
      `0o${n.toString(8)}`,
      ` ${n}`,
      `${n} `,
      `\t${n}`,
      `${n}\n`,
      `${String(n)[0]} ${String(n).slice(1)}`,
      `${n}_0`,
      String(n).replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d))),
      String(n).replace(/\d/g, (d) => String.fromCharCode(0x0660 + Number(d))),
    ),
  ),
  fc
    .double({ min: 1, max: 100, noNaN: true })
    .map(String)
    .filter((text) => !/^[0-9]+$/.test(text)),
);

/** Every method but GET and HEAD that Node's parser takes, unusual ones included. */
const OTHER_METHODS = METHODS.filter((method) => method !== 'GET' && method !== 'HEAD');

interface FuzzRequest {
  bytes: Buffer;
  /** What was sent, readable, for the shrunk counterexample. */
  description: string;
}

function requestArbitrary(operations: Operation[], key: string): fc.Arbitrary<FuzzRequest> {
  const operation = fc.constantFrom(
    ...operations,
    ...OUTSIDE_API.map((template) => ({ template, query: [] })),
  );
  const fuzzed = fc.tuple(anyValue, encoding).map(([v, how]) => encodeAs(v, how));
  const odd = fc.constantFrom('999999', '0', '-1', '1.0', '01', '+1', '..', '.', '%2F', '');
  const segment = (known: string[]) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...known) },
      { weight: 1, arbitrary: odd },
      { weight: 2, arbitrary: fuzzed },
    );
  const idSegment = segment(['1', '2', '101']);
  const variantSegment = segment(['original', 'processed']);
  const parameter = (names: string[]) =>
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...names, ...EXTRA_NAMES) },
        { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
      ),
      anyValue,
      encoding,
    );
  const authorization = fc.oneof(
    { weight: 20, arbitrary: fc.constant(`Bearer ${key}`) },
    { weight: 1, arbitrary: fc.constant(`bearer   ${key}  `) },
    { weight: 1, arbitrary: anyValue.map((v) => `Bearer ${v}`) },
    { weight: 1, arbitrary: anyValue.map((v) => `Bearer ${key}${v}`) },
    { weight: 1, arbitrary: anyValue },
  );
  const header = fc.tuple(
    fc.constantFrom(
      'Accept',
      'Accept-Encoding',
      'X-Request-Id',
      'If-None-Match',
      'If-Modified-Since',
      'Range',
      'X-Forwarded-For',
      'X-Forwarded-Proto',
      'X-Forwarded-Host',
      'Content-Type',
      'Cookie',
      'Origin',
      'Authorization',
      'X-Fuzz',
    ),
    anyValue,
  );
  return operation
    .chain((op) =>
      fc.record({
        operation: fc.constant(op),
        id: idSegment,
        variant: variantSegment,
        extraPath: fc.oneof(
          { weight: 15, arbitrary: fc.constant('') },
          { weight: 1, arbitrary: fc.constantFrom('/', '//', '/x', '/..', '/%2e%2e', '?') },
        ),
        query: fc.array(parameter(op.query), { maxLength: 8 }),
        // fc.option gives null once in `freq`.
        authorization: fc.option(authorization, { freq: 20 }),
        headers: fc.array(header, { maxLength: 3 }),
      }),
    )
    .map(({ operation: op, id, variant, extraPath, query, authorization: auth, headers }) => {
      const path = op.template.replace(/\{(\w+)\}/g, (_, name) =>
        name === 'variant' ? variant : id,
      );
      const under = OUTSIDE_API.includes(op.template) ? '' : API_PREFIX;
      const queryString = query
        .map(([name, value, how]) => `${encodeAs(name, how)}=${encodeAs(value, how)}`)
        .join('&');
      const target = `${under}${path}${extraPath}${queryString ? `?${queryString}` : ''}`;
      const sent: Array<[string, string]> = [...headers];
      if (auth !== null) sent.unshift(['Authorization', auth]);
      const text = rawGet(target, sent);
      return {
        bytes: Buffer.from(text, 'utf8'),
        description: JSON.stringify(text.slice(0, 2000)),
      };
    });
}

/** Below 500; an error is problem+json whose code is one we document and whose status matches. */
function assertWellFormed(
  response: RawResponse | null,
  description: string,
): asserts response is RawResponse {
  assert.ok(response, `the server closed the connection without answering ${description}`);
  const context = `${response.status} for ${description}: ${response.body.slice(0, 300)}`;
  assert.ok(response.status < 500, `a 5xx: ${context}`);
  assert.deepEqual(canaries(response.body), [], `a sensitive value in ${context}`);
  if (response.status < 400) return;
  assert.ok(
    response.headers['content-type']?.startsWith(PROBLEM_CONTENT_TYPE),
    `not problem+json: ${context}`,
  );
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.ok(typeof body.code === 'string' && body.code in ERRORS, `unknown code: ${context}`);
  assert.equal(body.status, response.status, `body status differs: ${context}`);
  // Each code has one status: no client error passes under another's code.
  assert.equal(ERRORS[body.code as ErrorCode].status, response.status, `wrong code: ${context}`);
  for (const field of ['type', 'title', 'detail'])
    assert.equal(typeof body[field], 'string', `no ${field}: ${context}`);
}

/** Two companies, an expense with a receipt, a key of company 1, the service on a port. */
async function listening(t: TestContext, dialect: Dialect) {
  const api = await useApi(t, dialect);
  await writeJpeg(api.dir, 'photo.jpg');
  await api.load([
    ...smallCompany(1, 0),
    ...smallCompany(2, 100),
    expense(1, 2, 1, 1, { receipt: { original: 'photo.jpg' } }),
  ]);
  const key = await api.createKey(1);
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = api.app.server.address() as AddressInfo;
  return { api, key, port };
}

describeEachDialect('fuzzing', (dialect) => {
  it('answers hostile parameters, paths and headers below 500, errors as problem+json', async (t) => {
    const { api, key, port } = await listening(t, dialect);
    const operations = await operationsOf(api);
    assert.ok(operations.length >= 10, 'the document lists the API operations');
    const normal = rawGet(`${API_PREFIX}/employees?per_page=5`, [
      ['Authorization', `Bearer ${key}`],
    ]);
    const before = await rawRequest(port, normal);

    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary(operations, key), async (request) => {
        const response = await rawRequest(port, request.bytes);
        assertWellFormed(response, request.description);
        seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // A generator that only ever produced one kind of answer would prove little.
    const statuses = JSON.stringify(Object.fromEntries(seen));
    for (const status of [200, 302, 400, 401, 404, 422])
      assert.ok(seen.has(status), `no ${status} among the answers: ${statuses}`);
    t.diagnostic(`answers: ${statuses}`);

    const after = await rawRequest(port, normal);
    assert.equal(after?.status, 200);
    assert.equal(after?.body, before?.body, 'the service answers as it did before');
  });

  it('answers 422 naming the parameter to every integer not in plain decimal digits', async (t) => {
    const { api, key, port } = await listening(t, dialect);
    const targets = (await operationsOf(api)).flatMap((op) =>
      op.integers.map((name) => ({ op, name })),
    );
    assert.ok(targets.length >= 6, 'page and per_page of every list');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        notPlainInteger,
        fc.constantFrom('component', 'percent-bytes'),
        async ({ op, name }, value, how) => {
          const target = `${pathOf(op)}?${name}=${encodeAs(value, how)}`;
          const response = await rawRequest(
            port,
            rawGet(target, [['Authorization', `Bearer ${key}`]]),
          );
          const description = JSON.stringify(target);
          assertWellFormed(response, description);
          assert.equal(response.status, 422, `${description}: ${response.body}`);
          const body = JSON.parse(response.body);
          assert.equal(body.code, 'validation_failed', description);
          assert.deepEqual(
            body.errors.map((e: { parameter: string }) => e.parameter),
            [name],
            description,
          );
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 4) },
    );
  });

  it('answers 405 with Allow: GET, HEAD to every other method on a known path, 404 elsewhere', async (t) => {
    const { api, port } = await listening(t, dialect);
    const operations = await operationsOf(api);
    const headers = fc.array(
      fc.constantFrom(
        'Content-Type: application/json',
        'Content-Type: text/plain',
        'Content-Type: ***',
        'Content-Encoding: zz',
        'Depth: infinity',
        'Expect: 200-ok',
        'Authorization: Bearer nope',
      ),
      { maxLength: 3 },
    );
    const body = fc.oneof(fc.constant(''), fc.constant('{not json'), fc.string({ maxLength: 50 }));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OTHER_METHODS),
        fc.constantFrom(...operations),
        fc.boolean(),
        headers,
        body,
        async (method, op, known, extra, payload) => {
          // Two more segments than any route of the API has.
          const path = known ? pathOf(op) : `${pathOf(op)}/no/such`;
          const length = Buffer.byteLength(payload);
          const request =
            `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n` +
            `${extra.map((h) => `${h}\r\n`).join('')}Content-Length: ${length}\r\n\r\n${payload}`;
          const response = await rawRequest(port, request);
          const description = `${method} ${path} ${JSON.stringify(extra)}`;
          assertWellFormed(response, description);
          assert.equal(response.status, known ? 405 : 404, `${description}: ${response.body}`);
          if (known) assert.equal(response.headers.allow, 'GET, HEAD', description);
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 4) },
    );
  });

  it('answers URLs and headers past the size limits with 414 or 431, and goes on serving', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const auth: [string, string] = ['Authorization', `Bearer ${key}`];
    const cases: Array<[string, string, number[]]> = [
      [
        'a 20 KiB path',
        rawGet(`${API_PREFIX}/employees/${'9'.repeat(20_000)}`, [auth]),
        [414, 431],
      ],
      [
        'a 20 KiB query',
        rawGet(`${API_PREFIX}/employees?search=${'a'.repeat(20_000)}`, [auth]),
        [414, 431],
      ],
      ['a 20 KiB header', rawGet(`${API_PREFIX}/me`, [auth, ['X-Big', 'b'.repeat(20_000)]]), [431]],
      [
        'many headers',
        rawGet(`${API_PREFIX}/me`, [
          auth,
          ...Array.from({ length: 3000 }, (_, i): [string, string] => [`X-H${i}`, 'v']),
        ]),
        [431],
      ],
      [
        'a 1,000-character id',
        rawGet(`${API_PREFIX}/employees/${'1'.repeat(1000)}`, [auth]),
        [404],
      ],
      [
        'a 10 KiB search',
        rawGet(`${API_PREFIX}/employees?search=${'a'.repeat(10_000)}`, [auth]),
        [422],
      ],
      ['a NUL in a header', rawGet(`${API_PREFIX}/me`, [auth, ['X-Nul', 'a\u0000b']]), [400]],
      ['a space in the target', rawGet(`${API_PREFIX}/me x`, [auth]), [400]],
      ['not HTTP at all', '\u0000\u0001\u0002 hello\r\n\r\n', [400]],
    ];
    for (const [label, request, statuses] of cases) {
      const response = await rawRequest(port, request);
      assertWellFormed(response, label);
      assert.ok(statuses.includes(response?.status ?? 0), `${label}: ${response?.status}`);
    }
    const me = await rawRequest(port, rawGet(`${API_PREFIX}/me`, [auth]));
    assert.equal(me?.status, 200);
  });
});
