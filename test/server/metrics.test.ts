import assert from 'node:assert/strict';
import { once } from 'node:events';
import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type { Dialect } from '../../src/db/connect.ts';
import { describeEachDialect, useDatabase } from '../helpers/databases.ts';
import { rawRequest, rawRequestText, statusesIn } from '../helpers/raw-http.ts';
import { testRedisUrl, useRedisPrefix } from '../helpers/redis.ts';
import { freePort, serveCompany } from '../helpers/serve.ts';

const EMPLOYEES = '/api/company/v1/employees';

/** GET `url` with this Accept-Encoding, its body as sent (fetch would decode it). */
async function getBytes(url: string, acceptEncoding: string) {
  const [response] = (await once(
    get(url, { headers: { 'accept-encoding': acceptEncoding } }),
    'response',
  )) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { headers: response.headers, body: Buffer.concat(chunks) };
}

/** `cdapi serve` over one company, with its metrics listener on a port of its own. */
async function servedWithMetrics(
  t: TestContext,
  dialect: Dialect,
  options: { extraEnv?: Record<string, string>; keyArgs?: string[] } = {},
) {
  const database = await useDatabase(t, dialect);
  const metricsPort = await freePort();
  const env = {
    DATABASE_URL: database.url,
    METRICS_PORT: String(metricsPort),
    ...options.extraEnv,
  };
  const served = await serveCompany(t, env, options.keyArgs);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const scrape = async () => {
    const response = await fetch(metricsUrl);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    return response.text();
  };
  return { ...served, database, metricsUrl, scrape };
}

/** The value of one sample in Prometheus's text format; null when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',').filter(Boolean);
    if (wanted.length === present.length && wanted.every((label) => present.includes(label))) {
      return Number(match[3]);
    }
  }
  return null;
}

describeEachDialect('Prometheus metrics', (dialect) => {
  it('are off unless METRICS_PORT is set', async (t) => {
    const database = await useDatabase(t, dialect);
    const { server } = await serveCompany(t, { DATABASE_URL: database.url });
    assert.ok(!server.stderr().includes('metrics'), server.stderr());
  });

  it('leave out the requests the service sends itself before it listens, logged neither', async (t) => {
    const { server, headers, scrape } = await servedWithMetrics(t, dialect);
    const before = await scrape();
    // The warm-up's /me, refused, read its made-up key from the database; nothing else counted.
    assert.equal(sample(before, 'cdapi_key_cache_lookups_total', { result: 'miss' }), 1);
    assert.equal(sample(before, 'cdapi_key_cache_lookups_total', { result: 'hit' }), 0);
    assert.doesNotMatch(before, /^cdapi_http_request_duration_seconds_count/m);
    assert.deepEqual(
      server.logLines().filter((line) => line.msg === 'request'),
      [],
      server.stdout(),
    );
    assert.doesNotMatch(server.stdout(), /warm-up/);

    assert.equal((await fetch(`${server.base}/me`, { headers })).status, 200);
    assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);
    const after = await scrape();
    const count = (route: string) =>
      sample(after, 'cdapi_http_request_duration_seconds_count', {
        method: 'GET',
        route,
        status: '200',
      });
    assert.equal(count('/api/company/v1/me'), 1);
    assert.equal(count('/healthz'), 1);
    // /healthz is counted; its route logs only at `warn` and above (src/http/routes/health.ts).
    assert.deepEqual(
      server
        .logLines()
        .filter((line) => line.msg === 'request')
        .map((line) => line.route),
      ['/api/company/v1/me'],
    );
  });

  it('count requests by route and status, 429s, cache hits and import runs; logs name the company and key', async (t) => {
    const { server, headers, keyId, metricsUrl, scrape } = await servedWithMetrics(t, dialect, {
      keyArgs: ['--per-minute', '4'],
    });
    assert.match(server.stderr(), new RegExp(`Prometheus metrics on ${metricsUrl}\n`));
    const statuses: number[] = [];
    // The response cache keeps an answer the second time it is made: the third is a hit.
    const paths = ['/employees', '/employees', '/employees', '/employees/999999', '/employees'];
    for (const path of paths) {
      statuses.push((await fetch(`${server.base}${path}`, { headers })).status);
    }
    statuses.push((await fetch(`${server.base}/employees`)).status);
    assert.deepEqual(statuses, [200, 200, 200, 404, 429, 401]);
    // What Node's parser refuses before a route is known is counted apart.
    const apiPort = Number(new URL(server.base).port);
    assert.equal((await rawRequest(apiPort, 'hello\r\n\r\n'))?.status, 400);
    assert.equal((await rawRequest(apiPort, 'FOO /nope HTTP/1.1\r\nHost: x\r\n\r\n'))?.status, 404);

    const text = await scrape();
    const requests = (route: string, status: string) =>
      sample(text, 'cdapi_http_request_duration_seconds_count', { method: 'GET', route, status });
    assert.equal(requests(EMPLOYEES, '200'), 3);
    assert.equal(requests(`${EMPLOYEES}/:id`, '404'), 1);
    assert.equal(requests(EMPLOYEES, '429'), 1);
    assert.equal(requests(EMPLOYEES, '401'), 1);
    assert.equal(
      sample(text, 'cdapi_http_request_duration_seconds_bucket', {
        le: '+Inf',
        method: 'GET',
        route: EMPLOYEES,
        status: '200',
      }),
      3,
    );
    assert.equal(sample(text, 'cdapi_rate_limited_requests_total'), 1);
    const refused = (status: string) =>
      sample(text, 'cdapi_http_refused_requests_total', { listener: 'api', status });
    assert.deepEqual([refused('400'), refused('404'), refused('408')], [1, 1, null]);
    // Only the scrape's own connection is open: nothing is being worked on or waiting.
    assert.equal(sample(text, 'cdapi_requests_in_progress', { state: 'working' }), 0);
    assert.equal(sample(text, 'cdapi_requests_in_progress', { state: 'queued' }), 0);
    assert.equal(sample(text, 'cdapi_response_cache_lookups_total', { result: 'hit' }), 1);
    assert.equal(sample(text, 'cdapi_response_cache_lookups_total', { result: 'miss' }), 3);
    const keyHits = sample(text, 'cdapi_key_cache_lookups_total', { result: 'hit' }) ?? -1;
    const keyMisses = sample(text, 'cdapi_key_cache_lookups_total', { result: 'miss' }) ?? -1;
    assert.ok(keyMisses >= 2 && keyHits >= 0, `${keyHits} hits, ${keyMisses} misses`);
    // And the warm-up's made-up key, before the service listened.
    assert.equal(keyHits + keyMisses, 5 + 1, 'one look-up a request that sent a key');
    assert.equal(sample(text, 'cdapi_import_runs_total', { outcome: 'succeeded' }), 1);
    assert.equal(sample(text, 'cdapi_import_runs_total', { outcome: 'failed' }), 0);
    assert.equal(sample(text, 'cdapi_import_records_total'), 6);
    assert.ok((sample(text, 'cdapi_import_seconds_total', { outcome: 'succeeded' }) ?? 0) > 0);
    const finished = sample(text, 'cdapi_import_last_finished_timestamp_seconds', {
      outcome: 'succeeded',
    });
    assert.ok(finished !== null && Math.abs(finished - Date.now() / 1000) < 120);
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'unavailable' }), 0);
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'failed' }), 0);
    assert.equal(sample(text, 'cdapi_build_info', { version: '1.0.0', node: process.version }), 1);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
    assert.equal(sample(text, 'cdapi_redis_fallback'), null, 'no Redis, no Redis gauge');
    if (dialect === 'postgres') {
      assert.equal(sample(text, 'cdapi_db_pool_max_connections', { database: 'primary' }), 10);
      assert.equal(sample(text, 'cdapi_db_pool_waiting_requests', { database: 'primary' }), 0);
      assert.ok(
        (sample(text, 'cdapi_db_pool_connections', { database: 'primary', state: 'idle' }) ?? 0) >=
          1,
      );
    } else {
      assert.ok(!text.includes('cdapi_db_pool_'), 'SQLite has no pool');
    }

    // Only /metrics, only GET and HEAD, and never on the API's port.
    const unknownPath = await fetch(metricsUrl.replace('/metrics', '/'));
    assert.equal(unknownPath.status, 404);
    // Half the keep-alive timeout it enforces (72 s by default), as the other listeners say.
    for (const answer of [unknownPath, await fetch(metricsUrl)]) {
      assert.equal(answer.headers.get('keep-alive'), 'timeout=36');
    }
    // Every answer carries an id and nosniff, as the service's others do; gzip when asked for.
    for (const answer of [unknownPath, await fetch(metricsUrl)]) {
      assert.match(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    }
    const plain = await fetch(metricsUrl, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.headers.get('vary'), 'accept-encoding');
    assert.match(await plain.text(), /^# HELP /);
    const zipped = await getBytes(metricsUrl, 'gzip');
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(gunzipSync(zipped.body).toString(), /^# HELP /);
    for (const refused of ['gzip;q=0', 'br', '*']) {
      const answer = await getBytes(metricsUrl, refused);
      assert.equal(answer.headers['content-encoding'], undefined, refused);
    }
    // What Node's parser refuses too (an unknown method, bytes that are not HTTP).
    for (const request of ['FOO /metrics HTTP/1.1\r\nHost: x\r\n\r\n', 'hello\r\n\r\n']) {
      const refused = await rawRequest(Number(new URL(metricsUrl).port), request);
      assert.equal(refused?.status, 400, request);
      assert.match(refused.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(refused.headers['x-content-type-options'], 'nosniff');
    }
    const port = Number(new URL(metricsUrl).port);
    // After requests read before it on the connection (pipelining): their answers first, whole.
    const pipelined = await rawRequestText(
      port,
      'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\nhello\r\n\r\n',
    );
    assert.deepEqual(statusesIn(pipelined), ['200', '404', '400'], pipelined.slice(0, 300));
    assert.match(
      pipelined,
      /# HELP .*Not found: the metrics are at \/metrics\n.*\r\n\r\nBad Request\n$/s,
    );
    // HTTP/1.1 without Host: the listener's own 400, with the headers every answer has.
    const hostless = await rawRequest(port, 'GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.equal(hostless?.status, 400);
    assert.equal(hostless.body, 'An HTTP/1.1 request must carry a Host header.\n');
    assert.match(hostless.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
    assert.equal((await rawRequest(port, 'GET /metrics HTTP/1.0\r\n\r\n'))?.status, 200);
    assert.equal((await fetch(metricsUrl, { method: 'POST' })).status, 405);
    assert.equal((await fetch(metricsUrl, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${server.origin}/metrics`)).status, 404);

    const logged = server.logLines().filter((line) => line.msg === 'request');
    assert.deepEqual(
      logged.map((line) => [line.status, line.companyId, line.keyId]),
      [
        [200, 1, keyId],
        [200, 1, keyId],
        [200, 1, keyId],
        [404, 1, keyId],
        [429, 1, keyId],
        [401, undefined, undefined],
        // The parser's refusals (above): no route, no key.
        [400, undefined, undefined],
        [404, undefined, undefined],
      ],
    );
  });

  it('count the admin listener’s requests in a histogram of their own', async (t) => {
    const adminPort = await freePort();
    const token = 'metrics-test-admin-token-0123456789abcdef';
    const { scrape } = await servedWithMetrics(t, dialect, {
      extraEnv: { ADMIN_PORT: String(adminPort), ADMIN_TOKEN: token },
    });
    const admin = `http://127.0.0.1:${adminPort}`;
    const authorization = `Bearer ${token}`;
    assert.equal(
      (await fetch(`${admin}/admin/companies`, { headers: { authorization } })).status,
      200,
    );
    assert.equal((await fetch(`${admin}/admin/companies`)).status, 401);
    assert.equal((await fetch(`${admin}/nope`)).status, 404);
    assert.equal((await rawRequest(adminPort, 'hello\r\n\r\n'))?.status, 400);

    const text = await scrape();
    const requests = (name: string, route: string, status: string) =>
      sample(text, `${name}_count`, { method: 'GET', route, status });
    const adminRequests = 'cdapi_admin_request_duration_seconds';
    assert.equal(requests(adminRequests, '/admin/companies', '200'), 1);
    assert.equal(requests(adminRequests, '/admin/companies', '401'), 1);
    assert.equal(requests(adminRequests, '(unmatched)', '404'), 1);
    assert.equal(requests('cdapi_http_request_duration_seconds', '/admin/companies', '200'), null);
    assert.equal(sample(text, 'cdapi_rate_limited_requests_total'), 0);
    const refused = (listener: string) =>
      sample(text, 'cdapi_http_refused_requests_total', { listener, status: '400' });
    assert.deepEqual([refused('admin'), refused('api')], [1, null]);
  });

  it('close a half-sent request after HTTP_HEADERS_TIMEOUT_MS, as the other listeners do', async (t) => {
    const { metricsUrl } = await servedWithMetrics(t, dialect, {
      extraEnv: { HTTP_HEADERS_TIMEOUT_MS: '1000' },
    });
    const started = Date.now();
    const socket = connect(Number(new URL(metricsUrl).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.resume(); // its 408 read, so that the end of the connection is seen
    socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
    const [closedBy] = await Promise.race([
      once(socket, 'close').then(() => ['server']),
      sleep(10_000).then(() => ['test']),
    ]);
    socket.destroy();
    assert.equal(closedBy, 'server', 'the listener kept the half-sent request');
    assert.ok(Date.now() - started < 5000);
  });

  it('count database errors', async (t) => {
    const { server, headers, database, scrape } = await servedWithMetrics(t, dialect);
    const { db } = database.handle;
    await sql`alter table employees rename column department to department_gone`.execute(db);
    const response = await fetch(`${server.base}/employees?per_page=7`, { headers });
    assert.equal(response.status, 500);
    let text = await scrape();
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'failed' }), 1);
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'unavailable' }), 0);
    // A table gone (a database recreated empty) answers 503, and counts as failed too: an
    // operator must act, it will not pass by itself.
    await sql`alter table employees rename to employees_gone`.execute(db);
    const gone = await fetch(`${server.base}/employees?per_page=8`, { headers });
    assert.equal(gone.status, 503);
    text = await scrape();
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'failed' }), 2);
    assert.equal(sample(text, 'cdapi_db_query_errors_total', { kind: 'unavailable' }), 0);
  });

  it('report whether rate limits fall back to per-instance counting without Redis', async (t) => {
    const unreachable = await servedWithMetrics(t, dialect, {
      extraEnv: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
    });
    assert.equal(sample(await unreachable.scrape(), 'cdapi_redis_fallback'), 1);
    const redis = testRedisUrl();
    if (redis.url === null) return t.skip(redis.skip);
    const reachable = await servedWithMetrics(t, dialect, {
      extraEnv: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: useRedisPrefix(t, redis.url) },
    });
    await fetch(`${reachable.server.base}/me`, { headers: reachable.headers });
    assert.equal(sample(await reachable.scrape(), 'cdapi_redis_fallback'), 0);
  });
});
