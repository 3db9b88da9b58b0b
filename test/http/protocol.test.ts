import assert from 'node:assert/strict';
import { once } from 'node:events';
import { METHODS } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import * as zlib from 'node:zlib';
import { gunzipSync } from 'node:zlib';
import type { HTTPMethods } from 'fastify';
import { sql } from 'kysely';
import { GZIP_LEVEL } from '../../src/app.ts';
import type { ServerConfig } from '../../src/config.ts';
import { setCompanyActive } from '../../src/db/companies.queries.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { revokeApiKey } from '../../src/db/keys.queries.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { ERRORS } from '../../src/schemas/problems.ts';
import { tokenOf } from '../helpers/admin.ts';
import { type ApiResponse, apiUrl, type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import {
  COMPANY_INACTIVE,
  insufficientScope,
  METHOD_NOT_ALLOWED,
  NO_SUCH_RESOURCE,
  problem,
  UNAUTHENTICATED,
} from '../helpers/problems.ts';
import {
  type RawResponse,
  rawGet,
  rawRequest,
  rawRequestText,
  statusesIn,
} from '../helpers/raw-http.ts';
import { company, employee } from '../helpers/records.ts';

const SERVICE_UNAVAILABLE = problem(
  'service_unavailable',
  'Service unavailable',
  503,
  'The database is not reachable.',
);

const RATE_LIMIT_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
];

const PROBLEM_JSON = /^application\/problem\+json/;

function assertProblem(res: ApiResponse, expected: object): void {
  assert.equal(res.status, (expected as { status: number }).status, res.body);
  assert.match(String(res.headers['content-type']), PROBLEM_JSON);
  assert.deepEqual(res.json, expected);
}

function assertNoRateLimitHeaders(res: ApiResponse): void {
  for (const name of RATE_LIMIT_HEADERS) {
    assert.equal(res.headers[name], undefined, `${name} on a ${res.status}`);
  }
}

/** Repeats a request until `done` holds or the deadline passes; returns the last answer. */
async function pollUntil(
  request: () => Promise<ApiResponse>,
  done: (res: ApiResponse) => boolean,
  deadlineMs: number,
): Promise<{ res: ApiResponse; elapsedMs: number }> {
  const start = Date.now();
  let res = await request();
  while (!done(res) && Date.now() - start < deadlineMs) {
    await sleep(50);
    res = await request();
  }
  return { res, elapsedMs: Date.now() - start };
}

/** One company with three employees, and a key with all scopes and no practical limit. */
async function setUp(t: TestContext, dialect: Dialect) {
  const api = await useApi(t, dialect, {
    records: [company(1), employee(1, 1), employee(1, 2), employee(1, 3)],
  });
  const key = await api.createKey(1);
  return { api, key };
}

const keyIdOf = async (api: TestApi, key: string): Promise<number> =>
  (await api.get('/me', key)).json.api_key.id;

/** Everything a client sees of an answer, but for what differs on every request. */
const answerOf = (res: ApiResponse) => {
  const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
  return { status: res.status, headers, body: res.body };
};

/** The same key with its last (checksum) character changed. */
const breakChecksum = (key: string) => `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;

describeEachDialect('authentication', (dialect) => {
  it('answers 401 with one body for a missing, malformed, unknown or damaged key', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const reference = await api.get('/employees', null);
    assertProblem(reference, UNAUTHENTICATED);
    assert.equal(reference.headers['www-authenticate'], 'Bearer');
    assertNoRateLimitHeaders(reference);

    const cases: Array<[label: string, authorization: string]> = [
      ['an empty header', ''],
      ['another scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
      ['another scheme with a valid key', `Token ${key}`],
      ['the key without a scheme', key],
      ['Bearer without a key', 'Bearer'],
      ['Bearer and spaces', 'Bearer    '],
      ['a key with a trailing word', `Bearer ${key} extra`],
      ['a key of the wrong format', 'Bearer not-a-key'],
      ['an unknown well-formed key', `Bearer ${generateApiKey().key}`],
      ['a key with a broken checksum', `Bearer ${breakChecksum(key)}`],
      ['a key with an extra character', `Bearer ${key}x`],
      ['a truncated key', `Bearer ${key.slice(0, -1)}`],
    ];
    for (const [label, authorization] of cases) {
      await t.test(label, async () => {
        const res = await api.get('/employees', null, { headers: { authorization } });
        assert.equal(res.status, 401, res.body);
        assert.deepEqual(answerOf(res), answerOf(reference));
      });
    }
  });

  it('answers 401 to two Authorization headers, whichever comes first', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const other = await api.createKey(1);
    const reference = await api.get('/employees', null);
    for (const pair of [
      [key, other],
      [key, key],
      [key, 'not-a-key'],
    ]) {
      const authorization = pair.map((k) => `Bearer ${k}`);
      const res = await api.get('/employees', null, {
        headers: { authorization } as unknown as Record<string, string>,
      });
      assert.equal(res.status, 401, res.body);
      assert.deepEqual(answerOf(res), answerOf(reference));
    }
  });

  it('takes the scheme name in any case', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const res = await api.get('/me', null, { headers: { authorization: `bearer ${key}` } });
    assert.equal(res.status, 200, res.body);
  });

  it('refuses a revoked key within 2 seconds, with the unknown key’s body', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const keyId = await keyIdOf(api, key); // the lookup is now cached
    const unknown = await api.get('/employees', generateApiKey().key);
    assert.ok(await revokeApiKey(api.handle.db, keyId));

    const { res, elapsedMs } = await pollUntil(
      () => api.get('/employees', key),
      (r) => r.status !== 200,
      2000,
    );
    assert.ok(elapsedMs <= 2000, `took ${elapsedMs} ms`);
    assert.equal(res.status, 401, res.body);
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    assertNoRateLimitHeaders(res);
    // Indistinguishable: the same status, headers and bytes, but for the request's own id.
    assert.deepEqual(answerOf(res), answerOf(unknown));

    // Past the lookup cache's lifetime, it stays refused, byte for byte like an unknown key.
    await sleep(1100);
    const later = await api.get('/employees', key);
    assert.deepEqual(answerOf(later), answerOf(unknown));
  });

  it('answers 403 company_inactive within 2 seconds of deactivation, and 200 after reactivation', async (t) => {
    const { api, key } = await setUp(t, dialect);
    assert.equal((await api.get('/employees', key)).status, 200);
    await setCompanyActive(api.handle.db, 1, false);

    const inactive = await pollUntil(
      () => api.get('/employees', key),
      (r) => r.status !== 200,
      2000,
    );
    assert.ok(inactive.elapsedMs <= 2000, `took ${inactive.elapsedMs} ms`);
    assertProblem(inactive.res, COMPANY_INACTIVE);
    await sleep(1100);
    assertProblem(await api.get('/me', key), COMPANY_INACTIVE);

    await setCompanyActive(api.handle.db, 1, true);
    const active = await pollUntil(
      () => api.get('/employees', key),
      (r) => r.status !== 403,
      2000,
    );
    assert.ok(active.elapsedMs <= 2000, `took ${active.elapsedMs} ms`);
    assert.equal(active.res.status, 200, active.res.body);
  });
});

describeEachDialect('precedence of errors', (dialect) => {
  it('401 before 403 company_inactive: a revoked key of an inactive company', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const keyId = await keyIdOf(api, key);
    await revokeApiKey(api.handle.db, keyId);
    await setCompanyActive(api.handle.db, 1, false);
    await sleep(1100);
    const res = await api.get('/employees', key);
    assertProblem(res, UNAUTHENTICATED);
    assert.equal(res.body, (await api.get('/employees', null)).body);
  });

  it('403 company_inactive before 429: a key over its limit in an inactive company', async (t) => {
    const { api } = await setUp(t, dialect);
    const key = await api.createKey(1, { perMinute: 1 });
    assert.equal((await api.get('/me', key)).status, 200);
    assert.equal((await api.get('/me', key)).status, 429);
    await setCompanyActive(api.handle.db, 1, false);
    await sleep(1100);
    const res = await api.get('/me', key);
    assertProblem(res, COMPANY_INACTIVE);
    assert.equal(res.headers['retry-after'], undefined);
    // The key's windows are told, as on every answer to a known key, and the refusal is not
    // counted: the window holds the one accepted request.
    for (let i = 0; i < 2; i += 1) {
      const again = await api.get('/me', key);
      assertProblem(again, COMPANY_INACTIVE);
      assert.equal(again.headers['ratelimit-policy'], '"minute";q=1;w=60, "hour";q=1000000;w=3600');
      assert.match(String(again.headers.ratelimit), /^"minute";r=0;t=\d+, "hour";r=999999;t=\d+$/);
      assert.equal(again.headers['x-ratelimit-remaining'], '0');
    }
  });

  it('429 before 403 insufficient_scope: a key over its limit without the scope', async (t) => {
    const { api } = await setUp(t, dialect);
    const key = await api.createKey(1, { perMinute: 1, scopes: ['expenses.read'] });
    assert.equal((await api.get('/me', key)).status, 200);
    const res = await api.get('/leaves', key);
    assert.equal(res.status, 429, res.body);
    assert.equal(res.json.code, 'rate_limited');
  });

  it('403 insufficient_scope before 422: a bad parameter on a route the key may not call', async (t) => {
    const { api } = await setUp(t, dialect);
    const expensesOnly = await api.createKey(1, { scopes: ['expenses.read'] });
    const leavesOnly = await api.createKey(1, { scopes: ['leaves.read'] });
    const cases: Array<[path: string, key: string, scope: string]> = [
      ['/leaves?page=0&status=nope', expensesOnly, 'leaves.read'],
      ['/leaves/abc', expensesOnly, 'leaves.read'],
      ['/expenses?per_page=1000', leavesOnly, 'expenses.read'],
      ['/expenses/999999/receipt?variant=bogus', leavesOnly, 'expenses.read'],
    ];
    for (const [path, key, scope] of cases) {
      await t.test(path, async () => {
        const res = await api.get(path, key);
        assertProblem(res, insufficientScope(scope));
        assert.equal(
          res.headers['www-authenticate'],
          `Bearer error="insufficient_scope", scope="${scope}"`,
        );
      });
    }
  });

  it('422 before 404: a bad parameter on a record that does not exist', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const res = await api.get('/expenses/999999/receipt?variant=bogus', key);
    assertProblem(res, {
      ...problem(
        'validation_failed',
        'Validation failed',
        422,
        'Invalid query parameter: variant.',
      ),
      errors: [{ parameter: 'variant', message: 'must be processed or original' }],
    });
  });

  it('401 before 422 and 404', async (t) => {
    const { api } = await setUp(t, dialect);
    for (const path of ['/employees?page=0', '/employees/999', '/employees/abc']) {
      assertProblem(await api.get(path, null), UNAUTHENTICATED);
    }
  });
});

/** A path of every kind of operation: list, record, reference list, redirect, signed file. */
const KNOWN_PATHS = [
  '/leaves',
  '/employees/1',
  '/me',
  '/leave-types',
  '/expenses/1/receipt',
  '/receipt-files/1/original',
  // Outside the API's base path.
  '/healthz',
  '/readyz',
  '/docs',
  '/docs/errors',
  '/docs/json',
  '/docs/static/index.css',
  '/docs/static/',
  '/api/company/v1/openapi.json',
];

describe('paths and methods', () => {
  it('answers 404 problem+json for unknown paths, with or without a key', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    for (const path of ['/api/company/v1/nope', '/nope', '/api/company/v1', '/api/company/v2/me']) {
      for (const presented of [key, null]) {
        await t.test(`${path} ${presented ? 'with' : 'without'} a key`, async () => {
          assertProblem(await api.get(path, presented), NO_SUCH_RESOURCE);
        });
      }
    }
  });

  it('answers 405 with Allow: GET, HEAD for every other method on known paths, without a key', async (t) => {
    const { api } = await setUp(t, 'sqlite');
    // Every method Node's parser knows: WebDAV's, TRACE, QUERY (which Fastify answers 400
    // without a Content-Type) and CONNECT included.
    const methods = METHODS.filter((method) => method !== 'GET' && method !== 'HEAD');
    assert.ok(methods.length > 30);
    for (const path of KNOWN_PATHS) {
      await t.test(path, async () => {
        for (const method of methods) {
          const res = await api.get(path, null, { method: method as HTTPMethods });
          assert.equal(res.status, 405, `${method} ${path}: ${res.body}`);
          assertProblem(res, METHOD_NOT_ALLOWED);
          assert.equal(res.headers.allow, 'GET, HEAD', `${method} ${path}`);
        }
      });
    }
  });

  it('sends the reference page’s static folder and index file to the page itself', async (t) => {
    const { api } = await setUp(t, 'sqlite');
    // Served from the static folder, the page's relative links (./json) would lead nowhere.
    for (const [path, location] of [
      ['/docs/static/', '../'],
      ['/docs/static/index.html', '../'],
    ]) {
      const res = await api.get(path as string, null);
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.location, location, path);
      const page = await api.get(new URL(location as string, `http://host${path}`).pathname, null);
      assert.equal(page.status, 200, path);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.body, /swagger-initializer\.js/);
    }
    // The page finds its document at its own URL plus ./json: with a link's query string kept,
    // it would load itself. Sent to the page without it, relatively.
    for (const [path, location] of [
      ['/docs?utm_source=mail', 'docs'],
      ['/docs/?x=1', './'],
      ['/docs/static/index.html?x=1', '../'],
    ]) {
      const res = await api.get(path as string, null);
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.location, location, path);
    }
    // A phone lays it out at its own width.
    for (const path of ['/docs', '/docs/']) {
      for (const encoding of ['identity', 'gzip']) {
        const page = await api.app.inject({
          url: path,
          headers: { 'accept-encoding': encoding },
        });
        // Below the compression threshold today; edited before compression all the same.
        const html =
          page.headers['content-encoding'] === 'gzip'
            ? gunzipSync(page.rawPayload).toString()
            : page.body;
        assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      }
    }
    assert.equal((await api.get('/docs/json?x=1', null)).status, 200);
  });

  it('lets the reference page send its requests to PUBLIC_BASE_URL, opened under another name', async (t) => {
    const csp = async (config: Partial<ServerConfig>) => {
      const api = await useApi(t, 'sqlite', { config });
      const policy = String((await api.get('/docs/', null)).headers['content-security-policy']);
      return /connect-src ([^;]*)/.exec(policy)?.[1];
    };
    assert.equal(await csp({}), "'self'");
    assert.equal(
      await csp({ publicBaseUrl: 'https://api.example.com:8443/api/company/v1' }),
      "'self' https://api.example.com:8443",
    );
  });

  it('answers a method Node does not know like any other: 405 on a known path, 404 elsewhere', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const send = (line: string) =>
      rawRequest(port, `${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    const assertAnswer = (response: RawResponse | null, status: number, label: string) => {
      assert.equal(response?.status, status, `${label}: ${response?.body}`);
      assert.match(response.headers['content-type'] ?? '', PROBLEM_JSON, label);
      assert.match(response.headers['x-request-id'] ?? '', /^[\w-]{8,}$/, label);
      assert.equal(response.headers.allow, status === 405 ? 'GET, HEAD' : undefined, label);
      const expected = { 400: undefined, 404: NO_SUCH_RESOURCE, 405: METHOD_NOT_ALLOWED }[status];
      if (expected) assert.deepEqual(JSON.parse(response.body), expected, label);
    };
    // Made up, lower case (methods are case-sensitive), and names HTTP never had.
    for (const method of ['FOO', 'get', 'BREW', 'X-CUSTOM']) {
      for (const path of KNOWN_PATHS) {
        assertAnswer(await send(`${method} ${apiUrl(path)} HTTP/1.1`), 405, `${method} ${path}`);
      }
      for (const path of ['/nope', '/api/company/v1/nope', '/api/company/v1/leaves/1/nope']) {
        assertAnswer(await send(`${method} ${path} HTTP/1.1`), 404, `${method} ${path}`);
      }
    }
    // The target in every form the router takes: with a query, absolute, percent-escaped, bad.
    const targets: Array<[target: string, status: number]> = [
      [`${API_PREFIX}/leaves?status=approved&page=2`, 405],
      [`http://localhost${API_PREFIX}/me`, 405],
      ['http://localhost', 404],
      ['http://localhost/healthz?x=1', 405],
      [`${API_PREFIX}/l%65aves`, 405],
      [`${API_PREFIX}/%ff`, 404],
      ['*', 404],
    ];
    for (const [target, status] of targets) {
      assertAnswer(await send(`FOO ${target} HTTP/1.1`), status, target);
    }
    // Not a method token, or a request line that is not HTTP: the bytes are not HTTP.
    for (const line of [
      `F@O ${API_PREFIX}/me HTTP/1.1`,
      `FOO ${API_PREFIX}/me`,
      `FOO ${API_PREFIX}/me HTTP/2.0`,
    ]) {
      assertAnswer(await send(line), 400, line);
    }
    // After an answered request on the same connection, the second request's own line counts.
    const pipelined = await rawRequestText(
      port,
      `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n` +
        `FOO ${API_PREFIX}/nope HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    );
    assert.deepEqual(statusesIn(pipelined), ['200', '404'], pipelined);
    // The service lives on.
    const after = await rawRequest(
      port,
      rawGet(`${API_PREFIX}/me`, [['Authorization', `Bearer ${key}`]]),
    );
    assert.equal(after?.status, 200);
  });

  it('answers every request pipelined before one it refuses, each whole, then refuses it', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const auth = `Authorization: Bearer ${key}\r\n`;
    const lists = Array.from(
      { length: 8 },
      (_, index) =>
        `GET ${API_PREFIX}/employees?per_page=1&page=${(index % 3) + 1} HTTP/1.1\r\nHost: localhost\r\n${auth}\r\n`,
    ).join('');
    const eight = Array.from({ length: 8 }, () => '200');
    const unknownMethod = `FOO ${API_PREFIX}/me HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    const badHeader = `GET ${API_PREFIX}/me HTTP/1.1\r\nBad Header\r\n\r\n`;
    const brokenBody = `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: localhost\r\n${auth}Transfer-Encoding: chunked\r\n\r\nzz\r\n`;
    for (const [refused, status] of [
      [unknownMethod, '405'],
      [badHeader, '400'],
    ] as const) {
      const text = await rawRequestText(port, lists + refused);
      assert.deepEqual(statusesIn(text), [...eight, status], text);
      // Each answer whole: the lists' employees (three, a page each) in order.
      const ids = [...text.matchAll(/"data":\[\{"id":(\d+)/g)].map((match) => Number(match[1]));
      assert.deepEqual(ids, [1, 2, 3, 1, 2, 3, 1, 2]);
    }
    // A body whose chunked framing is broken, alone: refused 400 bad_request.
    const alone = await rawRequest(port, brokenBody);
    assert.equal(alone?.status, 400);
    assert.equal(JSON.parse(alone.body).code, 'bad_request');
    // Behind others: their answers, then its own, its route's (a GET reads no body) or the
    // refusal, as the route answered before its turn came or not; then the connection closes.
    const behind = statusesIn(await rawRequestText(port, lists + brokenBody));
    assert.deepEqual(behind.slice(0, 8), eight);
    assert.equal(behind.length, 9);
    assert.ok(['200', '400'].includes(behind[8] as string), behind.join());
    assert.equal(
      api.logLines().filter((line) => Number(line.level) >= 40).length,
      0,
      'no warning or error logged',
    );
  });

  it('answers a client that half-closes its connection once its request is sent, then closes it', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const auth: [string, string] = ['Authorization', `Bearer ${key}`];
    // A list read from the database (no kept answer), with and without Connection: close; a
    // half-closed connection delimits no request and still wants its answer (RFC 9112 §9.6).
    for (const request of [
      rawGet(`${API_PREFIX}/employees?per_page=100`, [auth]),
      `GET ${API_PREFIX}/employees?sort=-id HTTP/1.1\r\nHost: localhost\r\n${auth.join(': ')}\r\n\r\n`,
    ]) {
      const response = await rawRequest(port, request, { halfClose: true, timeoutMs: 5000 });
      assert.equal(response?.status, 200, request);
      assert.equal(JSON.parse(response.body).data.length, 3, request);
    }
  });

  it('announces no keep-alive on an answer after which the connection closes', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const auth = `Authorization: Bearer ${key}`;
    for (const request of [
      `GET ${API_PREFIX}/me HTTP/1.0\r\n${auth}\r\n\r\n`,
      `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${auth}\r\n\r\n`,
      `GET ${API_PREFIX}/nope HTTP/1.0\r\n\r\n`,
    ]) {
      const response = await rawRequest(port, request, { timeoutMs: 5000 });
      assert.ok(response, request);
      assert.equal(response.headers.connection, 'close', request);
      assert.equal(response.headers['keep-alive'], undefined, request);
    }
  });

  it('answers 404 to any method on an unknown path, whatever body comes with it', async (t) => {
    const { api } = await setUp(t, 'sqlite');
    const requests: Array<
      [method: HTTPMethods, headers: Record<string, string>, payload?: string]
    > = [
      ['QUERY', {}, 'status=approved'],
      ['QUERY', { 'content-type': 'text/plain' }, 'x'],
      ['POST', { 'content-type': 'application/json' }, '{not json'],
      ['PUT', { 'content-type': 'application/xml' }, '<leave/>'],
      ['PROPFIND', { depth: '1' }],
      ['TRACE', {}],
    ];
    for (const [method, headers, payload] of requests) {
      const res = await api.get('/nope', null, { method, headers, payload });
      assertProblem(res, NO_SUCH_RESOURCE);
    }
  });

  it('routes CONNECT and an unmet Expect like any request, over a real connection', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const send = async (request: string) => {
      const response = await rawRequest(port, request);
      assert.ok(response, `no answer to ${request}`);
      return { ...response, json: JSON.parse(response.body || 'null') };
    };
    // Node hands CONNECT to no route and closes the connection unanswered unless told.
    const refused = await send(`CONNECT ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(refused.status, 405);
    assert.equal(refused.headers.allow, 'GET, HEAD');
    assert.deepEqual(refused.json, METHOD_NOT_ALLOWED);
    const tunnel = await send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.deepEqual([tunnel.status, tunnel.json], [404, NO_SUCH_RESOURCE]);
    // Node answers 417 with no body to an Expect other than 100-continue unless told.
    const expecting = await send(
      `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 200-ok\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    );
    assert.equal(expecting.status, 200, expecting.body);
    assert.equal(expecting.json.company.id, 1);
    // Nothing reads a body: a client that asks first is never told to send it, and the
    // connection closes after the answer (the body may never come).
    for (const [line, status] of [
      [`POST ${API_PREFIX}/me`, '405'],
      [`GET ${API_PREFIX}/me`, '200'],
    ]) {
      const text = await rawRequestText(
        port,
        `${line} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\nAuthorization: Bearer ${key}\r\n\r\n`,
      );
      assert.deepEqual(statusesIn(text), [status], text);
      assert.match(text, /\r\nconnection: close\r\n/i, line);
    }
    // Clients that reset a CONNECT before its answer is written: the server must live on.
    for (let i = 0; i < 20; i++) {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write(`CONNECT ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\n\r\n`);
      socket.resetAndDestroy();
    }
    await sleep(200);
    const after = await send(rawGet(`${API_PREFIX}/me`, [['Authorization', `Bearer ${key}`]]));
    assert.equal(after.status, 200);
  });

  it('labels each client error that HTTP or the framework answers with a code of its own', async (t) => {
    const { api } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const asset = '/docs/static/index.css';
    const cases: Array<
      [label: string, request: string, code: string, status: number, title: string]
    > = [
      ['bytes that are not HTTP', '\u0000\u0001 hello\r\n\r\n', 'bad_request', 400, 'Bad request'],
      [
        'an HTTP/1.1 request without Host',
        `GET ${API_PREFIX}/me HTTP/1.1\r\nAuthorization: Bearer x\r\nConnection: close\r\n\r\n`,
        'bad_request',
        400,
        'Bad request',
      ],
      // Node's parser takes a request line without a version (HTTP/0.9) and HTTP/2.0, which
      // this HTTP/1 listener does not speak.
      ...['', ' HTTP/2.0', ' HTTP/0.9'].map((version): [string, string, string, number, string] => [
        `a request line with${version || 'out a version'}`,
        `GET /healthz${version}\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        'bad_request',
        400,
        'Bad request',
      ]),
      // RFC 9112 has no fragment in a request-target: the router cut the path at it (the
      // query dropped) and kept it in a query.
      ...[
        `${API_PREFIX}/employees#?status=bogus`,
        `${API_PREFIX}/employees?search=E-00#01`,
        '/healthz#x',
      ].map((target): [string, string, string, number, string] => [
        `a # in the target ${target}`,
        rawGet(target, [['Authorization', 'Bearer x']]),
        'bad_request',
        400,
        'Bad request',
      ]),
      // The same for a method Node's parser does not know, answered from the request line.
      ...[`${API_PREFIX}/leaves#x`, `http:///${API_PREFIX.slice(1)}/leaves`].map(
        (target): [string, string, string, number, string] => [
          `FOO ${target}`,
          `FOO ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
          'bad_request',
          400,
          'Bad request',
        ],
      ),
      [
        'two Host header lines',
        `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nAuthorization: Bearer x\r\nConnection: close\r\n\r\n`,
        'bad_request',
        400,
        'Bad request',
      ],
      // Paths that leave the folder, and names it cannot have: no such file.
      [
        'a path out of the static folder',
        rawGet('/docs/static/%2e%2e/%2e%2e/package.json'),
        'not_found',
        404,
        'Not found',
      ],
      [
        'a path out of the static folder, written as it is',
        rawGet('/docs/static/../../package.json'),
        'not_found',
        404,
        'Not found',
      ],
      [
        'a NUL in a static file name',
        rawGet('/docs/static/index.css%00'),
        'not_found',
        404,
        'Not found',
      ],
      [
        'a static file name too long for the file system',
        rawGet(`/docs/static/${'a'.repeat(5000)}`),
        'not_found',
        404,
        'Not found',
      ],
      [
        'an If-Match no file has',
        rawGet(asset, [['If-Match', '"nope"']]),
        'precondition_failed',
        412,
        'Precondition failed',
      ],
      [
        'a Content-Encoding no one decodes',
        rawGet('/healthz', [['Content-Encoding', 'zz']]),
        'unsupported_media_type',
        415,
        'Unsupported media type',
      ],
      [
        'a range past the end of a file',
        rawGet(asset, [['Range', 'bytes=99999999-']]),
        'range_not_satisfiable',
        416,
        'Range not satisfiable',
      ],
      [
        'a 20 KiB header',
        rawGet('/healthz', [['X-Big', 'b'.repeat(20_000)]]),
        'headers_too_large',
        431,
        'Request header fields too large',
      ],
    ];
    for (const [label, request, code, status, title] of cases) {
      const response = await rawRequest(port, request);
      assert.equal(response?.status, status, `${label}: ${response?.body}`);
      assert.equal(
        response.headers['content-type'],
        'application/problem+json; charset=utf-8',
        label,
      );
      assert.match(response.headers['x-request-id'] ?? '', /^[\w-]{8,}$/, label);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', label);
      // As every other answer: the time it was made (RFC 9110 §6.6.1), kept by no cache.
      assert.ok(Math.abs(Date.parse(response.headers.date ?? '') - Date.now()) < 60_000, label);
      assert.equal(response.headers['cache-control'], 'no-store', label);
      const body = JSON.parse(response.body);
      assert.deepEqual(
        body,
        { type: `/docs/errors#${code}`, title, status, detail: body.detail, code },
        label,
      );
      assert.equal(typeof body.detail, 'string', label);
      assert.equal(
        ERRORS[code as keyof typeof ERRORS]?.status,
        status,
        `${code} is in the registry`,
      );
      // A range past the end says how long the file is (RFC 9110 §15.5.17).
      if (status === 416) assert.match(response.headers['content-range'] ?? '', /^bytes \*\/\d+$/);
    }
  });

  it('tells a client that sends non-ASCII characters unencoded in the target to percent-encode them', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = api.app.server.address() as AddressInfo;
    const auth: [string, string] = ['Authorization', `Bearer ${key}`];
    // As curl sends `?search=straße` typed on its command line: the UTF-8 bytes as they are.
    for (const target of [`${API_PREFIX}/employees?search=straße`, `${API_PREFIX}/employees/é`]) {
      const response = await rawRequest(port, rawGet(target, [auth]));
      assert.equal(response?.status, 400, target);
      const body = JSON.parse(response.body);
      assert.equal(body.code, 'bad_request');
      assert.match(body.detail, /not ASCII: percent-encode them/, target);
    }
    // Other bytes that are not HTTP keep the general detail.
    const space = await rawRequest(port, rawGet(`${API_PREFIX}/employees?search=a b`, [auth]));
    assert.equal(space?.status, 400);
    assert.equal(JSON.parse(space.body).detail, 'The request is not valid HTTP.');
    const encoded = await rawRequest(
      port,
      rawGet(`${API_PREFIX}/employees?search=stra%C3%9Fe`, [auth]),
    );
    assert.equal(encoded?.status, 200);
  });

  it('answers 405 whatever body comes with the other method', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    const bodies: Array<[contentType: string, payload: string]> = [
      ['application/json', '{"status":"approved"}'],
      ['application/json', '{not json'],
      ['application/xml', '<leave/>'],
      ['text/plain', 'hello'],
    ];
    for (const [contentType, payload] of bodies) {
      await t.test(`${contentType} ${payload}`, async () => {
        const res = await api.get('/leaves', key, {
          method: 'POST',
          headers: { 'content-type': contentType },
          payload,
        });
        assertProblem(res, METHOD_NOT_ALLOWED);
        assert.equal(res.headers.allow, 'GET, HEAD');
      });
    }
  });

  it('answers HEAD like GET, without a body', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    for (const path of ['/employees', '/employees/1', '/me']) {
      await t.test(path, async () => {
        const get = await api.get(path, key);
        const head = await api.get(path, key, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.body, '');
        for (const name of [
          'content-type',
          'content-length',
          'cache-control',
          'x-content-type-options',
          'ratelimit-policy',
        ]) {
          assert.equal(head.headers[name], get.headers[name], name);
        }
        assert.equal(Number(head.headers['content-length']), Buffer.byteLength(get.body));
      });
    }
  });
});

describe('headers', () => {
  it('puts X-Request-Id and nosniff on every response, and never X-Powered-By', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    const requests: Array<
      [label: string, send: (headers: Record<string, string>) => Promise<ApiResponse>]
    > = [
      ['200 list', (headers) => api.get('/employees', key, { headers })],
      ['200 /me', (headers) => api.get('/me', key, { headers })],
      ['401', (headers) => api.get('/employees', null, { headers })],
      ['404 record', (headers) => api.get('/employees/999', key, { headers })],
      ['404 path', (headers) => api.get('/nope', key, { headers })],
      ['405', (headers) => api.get('/me', null, { method: 'DELETE', headers })],
      ['422', (headers) => api.get('/employees?page=0', key, { headers })],
      ['HEAD', (headers) => api.get('/employees', key, { method: 'HEAD', headers })],
      ['/healthz', (headers) => api.get('/healthz', null, { headers })],
      ['/readyz', (headers) => api.get('/readyz', null, { headers })],
    ];
    for (const [label, send] of requests) {
      await t.test(label, async () => {
        const echoed = await send({ 'x-request-id': 'abc-123' });
        assert.equal(echoed.headers['x-request-id'], 'abc-123');
        assert.equal(echoed.headers['x-content-type-options'], 'nosniff');
        assert.equal(echoed.headers['x-powered-by'], undefined);

        const generated = await send({});
        const again = await send({});
        const id = String(generated.headers['x-request-id']);
        assert.match(id, /^[\x21-\x7e]{8,128}$/);
        assert.notEqual(id, String(again.headers['x-request-id']));
      });
    }
  });

  it('answers a path the router cannot decode, or a very long id, through every hook', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    const longId = '1'.repeat(101);
    for (const [path, detail] of [
      ['/employees/%FF', NO_SUCH_RESOURCE.detail],
      ['/employees/%', NO_SUCH_RESOURCE.detail],
      ['/expenses/1/%FF', NO_SUCH_RESOURCE.detail],
      ['/receipt-files/1/%C3', NO_SUCH_RESOURCE.detail],
      [`/employees/${longId}`, 'No record with this id exists.'],
      [`/leaves/${longId}`, 'No record with this id exists.'],
    ] as const) {
      const logged = api.logLines().length;
      const res = await api.get(path, key, { headers: { 'x-request-id': `odd-${logged}` } });
      assert.equal(res.status, 404, path);
      assert.equal(res.json.detail, detail, path);
      assert.equal(res.headers['x-request-id'], `odd-${logged}`, path);
      assert.equal(res.headers['cache-control'], 'no-store', path);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
      const lines = api.logLines().slice(logged);
      assert.ok(
        lines.some((line) => line.reqId === `odd-${logged}` && line.status === 404),
        `${path} is logged`,
      );
    }
    const root = await api.app.inject({ url: '/docs/static/%FF' });
    assert.equal(root.statusCode, 404);
    assert.match(String(root.headers['x-request-id']), /^[\w-]{8,}$/);
  });

  it('replaces an insane client request id with its own', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    // The last: a key sent in the wrong header, which must not reach the logs.
    for (const given of ['x'.repeat(300), 'has spaces', 'a"b', '<script>', key]) {
      await t.test(given.slice(0, 20), async () => {
        const res = await api.get('/employees', key, { headers: { 'x-request-id': given } });
        const id = String(res.headers['x-request-id']);
        assert.notEqual(id, given);
        assert.match(id, /^[\x21-\x7e]{8,128}$/);
        assert.equal(res.status, 200);
      });
    }
  });

  it('never takes a request id that holds a key without its prefix or an admin token', async (t) => {
    const adminToken = 'a'.repeat(20) + 'Bz9-_.:'.repeat(3) + 'c'.repeat(4);
    const api = await useApi(t, 'sqlite', {
      records: [company(1), employee(1, 1)],
      config: {
        admin: {
          port: 0,
          tokens: [tokenOf('admin', adminToken)],
          trustProxy: false,
        },
      },
    });
    const key = await api.createKey(1);
    const secret = key.slice('cdk_'.length);
    const inside = [`run-${adminToken}`, `${adminToken}.2`, `a:${adminToken}:b`];
    for (const given of [secret, `run-${secret}`, `${secret}.2`, adminToken, ...inside]) {
      await t.test(given.slice(0, 12), async () => {
        const res = await api.get('/employees', key, { headers: { 'x-request-id': given } });
        assert.equal(res.status, 200);
        assert.notEqual(res.headers['x-request-id'], given);
        assert.ok(
          !api.logLines().some((line) => JSON.stringify(line).includes(given)),
          'the id is not logged',
        );
      });
    }
    // Most of a secret is one too, whatever key the request sends: all of a token but a
    // character, 24 characters of it in a row, a key's random part with a wrong checksum or
    // none (the checksum is computed from it), 24 of its characters (the log would leave 8 to
    // guess).
    const wrongChecksum = `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`;
    const otherKey = await api.createKey(1);
    for (const [given, sentWith] of [
      [adminToken.slice(0, -1), key],
      [`run-${adminToken.slice(1)}`, key],
      [`x.${adminToken.slice(10, 34)}.y`, key],
      [wrongChecksum, otherKey],
      [secret.slice(0, 32), otherKey],
      [`req:${secret.slice(4, 28)}`, otherKey],
      [secret.slice(0, 32), null],
    ] as const) {
      const logged = api.logLines().length;
      const res = await api.get('/employees', sentWith, { headers: { 'x-request-id': given } });
      assert.notEqual(res.headers['x-request-id'], given, given);
      const lines = api.logLines().slice(logged);
      assert.ok(!lines.some((line) => JSON.stringify(line).includes(given)), given);
    }
    // Near misses are a client's own ids: 23 characters of a token, 11 characters of the key
    // sent with it, 23 of another key's, and the ids clients use (a UUID with or without its
    // hyphens, a trace id, a ULID, 128 bits in base64url).
    for (const given of [
      adminToken.slice(0, 23),
      secret.slice(0, 11),
      `${secret.slice(20, 31)}-x`,
      'f47ac10b-58cc-4372-a567-0e02b2c3d479',
      'f47ac10b58cc4372a5670e02b2c3d479',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      'q83vEjRWeJq-7Vx_M4rQ8A',
    ]) {
      const res = await api.get('/employees', otherKey, { headers: { 'x-request-id': given } });
      assert.equal(res.headers['x-request-id'], given);
    }
    const res = await api.get('/employees', otherKey, {
      headers: { 'x-request-id': secret.slice(0, 23) },
    });
    assert.equal(res.headers['x-request-id'], secret.slice(0, 23));
    // The request's own key is a secret in any part of 12 characters or more: its random part
    // without the checksum (from which the checksum is computed), or with a wrong one, or most
    // of it.
    const ownParts = [secret.slice(0, 32), wrongChecksum, `req:${secret.slice(0, 30)}`];
    for (const given of [...ownParts, secret.slice(0, 12), `x${secret.slice(26, 38)}`]) {
      const logged = api.logLines().length;
      const res = await api.get('/employees', key, { headers: { 'x-request-id': given } });
      assert.equal(res.status, 200);
      assert.notEqual(res.headers['x-request-id'], given);
      const lines = api.logLines().slice(logged);
      assert.ok(!lines.some((line) => JSON.stringify(line).includes(given)), given);
    }
  });

  it('marks data responses Cache-Control: no-store', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    for (const path of ['/me', '/employees', '/employees/1', '/employees?status=active']) {
      const res = await api.get(path, key);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store', path);
    }
  });
});

describe('compression', () => {
  it('gzips a large list for a client that accepts it', async (t) => {
    const records = [company(1), ...Array.from({ length: 60 }, (_, i) => employee(1, i + 1))];
    const api = await useApi(t, 'sqlite', { records });
    const key = await api.createKey(1);
    const plain = await api.get('/employees?per_page=100', key);
    assert.equal(plain.json.data.length, 60);
    assert.equal(plain.headers['content-encoding'], undefined);

    const zipped = await api.app.inject({
      method: 'GET',
      url: `${API_PREFIX}/employees?per_page=100`,
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
    });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers['content-type']), /^application\/json/);
    const unzipped = gunzipSync(zipped.rawPayload).toString('utf8');
    assert.ok(zipped.rawPayload.length < Buffer.byteLength(unzipped));
    assert.deepEqual(JSON.parse(unzipped), plain.json);
    // A page is compressed at once, not streamed, so its compressed length is stated.
    assert.ok(Buffer.byteLength(unzipped) > 8 * 1024, 'a page above the plugin’s own limit');
    assert.equal(zipped.headers['content-length'], String(zipped.rawPayload.length));
  });

  it('compresses gzip and deflate at GZIP_LEVEL, not zlib’s default', async (t) => {
    const records = [company(1), ...Array.from({ length: 100 }, (_, i) => employee(1, i + 1))];
    const api = await useApi(t, 'sqlite', { records });
    const key = await api.createKey(1);
    const url = `${API_PREFIX}/employees?per_page=100`;
    const plain = await api.get('/employees?per_page=100', key);
    const body = Buffer.from(plain.body);
    const encoders = { gzip: zlib.gzipSync, deflate: zlib.deflateSync };
    for (const [coding, encode] of Object.entries(encoders)) {
      const res = await api.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': coding },
      });
      assert.equal(res.headers['content-encoding'], coding);
      // zlib's output is fixed by its input and settings: the answer is the body at that level.
      const expected = encode(body, { level: GZIP_LEVEL });
      assert.ok(!expected.equals(encode(body)), 'the page tells the levels apart');
      assert.ok(res.rawPayload.equals(expected), coding);
    }
  });

  it('picks the encoding as docs/api.md says: zstd first among equals, gzip for *', async (t) => {
    const records = [company(1), ...Array.from({ length: 60 }, (_, i) => employee(1, i + 1))];
    const api = await useApi(t, 'sqlite', { records });
    const key = await api.createKey(1);
    const cases: Array<[accepted: string, chosen: string | undefined]> = [
      // zstd from Node 22.15 on (docs/api.md says so); brotli is next.
      ['gzip, deflate, br, zstd', 'zstdCompressSync' in zlib ? 'zstd' : 'br'],
      ['gzip, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['zstd;q=0, gzip', 'gzip'],
      // `*` alone is gzip, which every client reads; with gzip named, it stands for no more.
      ['*', 'gzip'],
      ['br;q=0.5, *', 'gzip'],
      ['gzip;q=0, *', undefined],
      ['x-gzip;q=0, *', undefined],
      ['GZIP;q=0,*;q=1', undefined],
      ['gzip;q=0, br, *', 'br'],
      ['gzip, *;q=0', 'gzip'],
      // x-gzip is gzip: refusing either name refuses both.
      ['gzip;q=0, x-gzip', undefined],
      ['x-gzip;q=0.0, gzip', undefined],
      ['X-GZIP; Q=0, gzip;q=1, br;q=0.1', 'br'],
      ['x-gzip', 'gzip'],
      ['x-gzip;q=0.5, gzip;q=0.8', 'gzip'],
      ['identity', undefined],
    ];
    for (const [accepted, chosen] of cases) {
      // Not through api.get, whose check against the OpenAPI document reads gzip and br only.
      const res = await api.app.inject({
        method: 'GET',
        url: `${API_PREFIX}/employees?per_page=100`,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': accepted },
      });
      assert.equal(res.statusCode, 200, accepted);
      assert.equal(res.headers['content-encoding'], chosen, accepted);
    }
  });

  it('answers HEAD with the headers of GET for every encoding: compressed length and coding too', async (t) => {
    const records = [company(1), ...Array.from({ length: 60 }, (_, i) => employee(1, i + 1))];
    const api = await useApi(t, 'sqlite', { records });
    const key = await api.createKey(1);
    const send = (method: 'GET' | 'HEAD', path: string, headers: Record<string, string>) =>
      api.app.inject({
        method,
        url: `${API_PREFIX}${path}`,
        headers: { authorization: `Bearer ${key}`, ...headers },
      });
    const named = ['content-length', 'content-encoding', 'content-type', 'etag', 'vary'];
    const codings = ['identity', 'gzip', 'deflate', 'br', 'zstd', 'gzip, deflate, br, zstd'];
    for (const path of ['/employees?per_page=100', '/employees?per_page=3', '/employees/1']) {
      for (const coding of codings) {
        const headers = { 'accept-encoding': coding };
        const get = await send('GET', path, headers);
        const head = await send('HEAD', path, headers);
        const what = `${path} ${coding}`;
        assert.equal(head.statusCode, 200, what);
        assert.equal(head.rawPayload.length, 0, what);
        for (const name of named) assert.equal(head.headers[name], get.headers[name], name);
        assert.equal(Number(head.headers['content-length']), get.rawPayload.length, what);
        if (path === '/employees?per_page=100' && coding !== 'identity') {
          assert.ok(head.headers['content-encoding'], `${what}: a large page is compressed`);
        }
        // Unchanged, the answer is a 304 without a body, a coding or a length, as for GET.
        const etag = String(get.headers.etag);
        const unchanged = { ...headers, 'if-none-match': etag };
        for (const method of ['GET', 'HEAD'] as const) {
          const res = await send(method, path, unchanged);
          assert.equal(res.statusCode, 304, `${method} ${what}`);
          assert.equal(res.rawPayload.length, 0);
          assert.equal(res.headers['content-encoding'], undefined, `${method} ${what}`);
          assert.equal(res.headers['content-length'], undefined, `${method} ${what}`);
          assert.equal(res.headers.etag, etag);
        }
      }
    }
  });

  it('does not compress a tiny body', async (t) => {
    const { api, key } = await setUp(t, 'sqlite');
    for (const path of ['/employees/1', '/employees/999', '/healthz']) {
      const res = await api.get(path, key, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.headers['content-encoding'], undefined, path);
      assert.ok(res.json, `${path} parses as JSON: ${res.body}`);
    }
  });
});

describeEachDialect('operations endpoints', (dialect) => {
  it('answers /healthz and /readyz without a key or rate-limit headers', async (t) => {
    const { api } = await setUp(t, dialect);
    for (const path of ['/healthz', '/readyz']) {
      const res = await api.get(path, null);
      assert.equal(res.status, 200, `${path}: ${res.body}`);
      assert.equal(
        res.body,
        path === '/readyz' ? '{"status":"ok","checks":{"database":"ok"}}' : '{"status":"ok"}',
      );
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assertNoRateLimitHeaders(res);
      const withBadKey = await api.get(path, generateApiKey().key);
      assert.equal(withBadKey.status, 200, path);
    }
  });

  it('answers /readyz 503 service_unavailable once the database is gone', async (t) => {
    const { api } = await setUp(t, dialect);
    assert.equal((await api.get('/readyz', null)).status, 200);
    await api.handle.close();
    const res = await api.get('/readyz', null);
    assertProblem(res, SERVICE_UNAVAILABLE);
    const health = await api.get('/healthz', null);
    assert.equal(health.status, 200);
  });

  it('answers 503 and is not ready once the database has lost its tables (recreated empty)', async (t) => {
    const { api, key } = await setUp(t, dialect);
    const cascade = dialect === 'postgres' ? sql` cascade` : sql``;
    await sql`drop table kysely_migration`.execute(api.handle.db);
    const ready = await api.get('/readyz', null);
    assert.equal(ready.status, 503);
    assert.equal(ready.json.code, 'service_unavailable');
    assert.match(ready.json.detail, /does not hold this version's schema.*cdapi migrate/);
    assert.equal(ready.headers['retry-after'], '5');
    await sql`drop table leave_types${cascade}`.execute(api.handle.db);
    const res = await api.get('/leave-types', key);
    assert.equal(res.status, 503, res.body);
    assert.equal(res.json.code, 'service_unavailable');
    assert.equal(res.headers['retry-after'], '5');
    assert.ok(
      api.logLines().some((line) => line.level === 50 && /lost its tables/.test(String(line.msg))),
      'an error line tells the operator',
    );
  });
});

describeEachDialect('rate limits', (dialect) => {
  it('describes both windows in the draft headers and the binding one in the legacy ones', async (t) => {
    const { api } = await setUp(t, dialect);
    const key = await api.createKey(1, { perMinute: 5, perHour: 50 });
    const res = await api.get('/employees', key);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['ratelimit-policy'], '"minute";q=5;w=60, "hour";q=50;w=3600');
    assert.equal(res.headers.ratelimit, '"minute";r=4;t=60, "hour";r=49;t=3600');
    assert.equal(res.headers['x-ratelimit-limit'], '5');
    assert.equal(res.headers['x-ratelimit-remaining'], '4');
    assert.equal(res.headers['x-ratelimit-reset'], '60');
    assert.equal(res.headers['retry-after'], undefined);
  });

  it('names the hour window in the legacy headers when it binds first', async (t) => {
    const { api } = await setUp(t, dialect);
    const key = await api.createKey(1, { perMinute: 10, perHour: 3 });
    const res = await api.get('/me', key);
    assert.equal(res.headers.ratelimit, '"minute";r=9;t=60, "hour";r=2;t=3600');
    assert.equal(res.headers['x-ratelimit-limit'], '3');
    assert.equal(res.headers['x-ratelimit-remaining'], '2');
    assert.equal(res.headers['x-ratelimit-reset'], '3600');
  });

  it('puts the headers on every authenticated answer, errors included', async (t) => {
    const { api } = await setUp(t, dialect);
    const key = await api.createKey(1, { perMinute: 50, scopes: ['expenses.read'] });
    const paths = ['/me', '/employees/999', '/employees?page=0', '/employees/abc', '/leaves'];
    for (const [i, path] of paths.entries()) {
      const res = await api.get(path, key);
      assert.equal(res.headers['ratelimit-policy'], '"minute";q=50;w=60, "hour";q=1000000;w=3600');
      assert.equal(res.headers['x-ratelimit-remaining'], String(50 - 1 - i), path);
    }
  });

  it('accepts exactly per_minute of parallel requests and refuses the rest with 429', async (t) => {
    const { api } = await setUp(t, dialect);
    const busy = await api.createKey(1, { perMinute: 5, perHour: 50 });
    const other = await api.createKey(1, { perMinute: 5, perHour: 50 });
    const [busyAnswers, otherAnswers] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => api.get('/employees', busy))),
      Promise.all(Array.from({ length: 3 }, () => api.get('/employees', other))),
    ]);

    const accepted = busyAnswers.filter((r) => r.status === 200);
    const refused = busyAnswers.filter((r) => r.status === 429);
    assert.equal(accepted.length, 5);
    assert.equal(refused.length, 15);
    for (const res of refused) {
      const retryAfter = String(res.headers['retry-after']);
      assert.match(retryAfter, /^\d+$/);
      assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, retryAfter);
      assertProblem(
        res,
        problem(
          'rate_limited',
          'Too many requests',
          429,
          `Rate limit exceeded; retry after ${retryAfter} seconds.`,
        ),
      );
      // Refusals are not counted: the hour window still holds only the 5 accepted requests.
      assert.equal(res.headers['ratelimit-policy'], '"minute";q=5;w=60, "hour";q=50;w=3600');
      assert.match(String(res.headers.ratelimit), /^"minute";r=0;t=\d+, "hour";r=45;t=\d+$/);
      assert.equal(res.headers['x-ratelimit-remaining'], '0');
    }

    assert.deepEqual(
      otherAnswers.map((r) => r.status),
      [200, 200, 200],
    );
    const next = await api.get('/employees', other);
    assert.equal(next.status, 200);
    assert.match(
      String(next.headers.ratelimit),
      /^"minute";r=1;t=(59|60), "hour";r=46;t=(3599|3600)$/,
    );
  });
});
