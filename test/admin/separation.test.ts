import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { ADMIN_TOKEN, useAdmin } from '../helpers/admin.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { NO_SUCH_RESOURCE, problem } from '../helpers/problems.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { company } from '../helpers/records.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const API_PREFIX = '/api/company/v1';

describeEachDialect('the admin API and the public listener', (dialect) => {
  it('answers every admin path 404 on the public listener, by any method, with any credentials', async (t) => {
    const { api, call } = await useAdmin(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const document = (await call('GET', '/admin/openapi.json', { token: null })).json;
    const operationPaths = Object.keys(document.paths).map((path) =>
      path.replace(/\{[^}]+\}/g, '1'),
    );
    const paths = [
      '/admin',
      '/admin/',
      '/admin/panel.js',
      '/admin/panel.css',
      '/admin/openapi.json',
    ]
      .concat(operationPaths)
      .flatMap((path) => [path, `${API_PREFIX}${path}`]);
    assert.equal(operationPaths.length, 8, operationPaths.join(', '));

    const reached: string[] = [];
    for (const path of paths) {
      for (const method of METHODS) {
        for (const authorization of [`Bearer ${ADMIN_TOKEN}`, `Bearer ${key}`]) {
          const response = await api.app.inject({
            method,
            url: path,
            headers: { authorization, 'content-type': 'application/x-ndjson' },
            payload: method === 'GET' || method === 'HEAD' ? undefined : '{"type":"company"}\n',
          });
          const body = method === 'HEAD' ? NO_SUCH_RESOURCE : response.json();
          if (response.statusCode !== 404 || body.detail !== NO_SUCH_RESOURCE.detail) {
            reached.push(`${method} ${path} → ${response.statusCode}`);
          }
        }
      }
    }
    assert.deepEqual(reached, []);
    // And the same admin requests work on the admin listener.
    assert.equal((await call('GET', '/admin/companies')).status, 200);
  });

  it('answers a method Node does not know 405 on a path the admin listener serves, with the methods that path takes', async (t) => {
    const { admin } = await useAdmin(t, dialect, { records: [company(1)] });
    await admin.listen({ host: '127.0.0.1', port: 0 });
    const { port } = admin.server.address() as AddressInfo;
    const answers: Record<string, string> = {
      '/admin/companies': 'GET, HEAD',
      '/admin/companies/1': 'GET, HEAD',
      '/admin/companies/1/keys': 'GET, HEAD, POST',
      '/admin/companies/%2F/keys': 'GET, HEAD, POST',
      '/admin/companies/1/deactivate': 'POST',
      '/admin/import#': 'POST',
      '/admin/companies/1/keys#x': 'GET, HEAD, POST',
      '/admin/keys/7/revoke': 'POST',
      'http://localhost/admin/import?x=1': 'POST',
      '/admin/openapi.json': 'GET, HEAD',
      '/admin': 'GET, HEAD',
    };
    for (const [method, target] of Object.keys(answers).flatMap((path) => [
      ['FOO', path],
      ['get', path],
    ])) {
      const response = await rawRequest(
        port,
        `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
      );
      const allow = answers[target as string] as string;
      assert.equal(response?.status, 405, `${method} ${target}: ${response?.body}`);
      assert.equal(response.headers.allow, allow, `${method} ${target}`);
      assert.equal(response.headers.connection, 'close', `${method} ${target}`);
      assert.deepEqual(
        JSON.parse(response.body),
        problem('method_not_allowed', 'Method not allowed', 405, `This path takes ${allow} only.`),
      );
    }
    // A path it does not serve, or one a route's parameters cannot spell, is 404.
    for (const path of [
      '/admin/keys',
      '/nope',
      '/admin/companies/1/',
      '/admin/companies/%E4/keys',
      'http:///admin/import',
    ]) {
      const response = await rawRequest(
        port,
        `FOO ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
      );
      assert.equal(response?.status, 404, `${path}: ${response?.body}`);
      assert.equal(response.headers.allow, undefined, path);
      assert.deepEqual(JSON.parse(response.body), NO_SUCH_RESOURCE, path);
    }
    // HTTP/1.1 without Host: the problem+json 400 of the public listener, not Node's bare one.
    const hostless = await rawRequest(
      port,
      `GET /admin/companies HTTP/1.1\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(hostless?.status, 400, hostless?.body);
    assert.match(hostless.headers['x-request-id'] ?? '', /^[\w-]{8,}$/);
    assert.deepEqual(
      JSON.parse(hostless.body),
      problem('bad_request', 'Bad request', 400, 'An HTTP/1.1 request must carry a Host header.'),
    );
    const old = await rawRequest(
      port,
      `GET /admin/companies HTTP/1.0\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
    );
    assert.equal(old?.status, 200, old?.body);
  });

  it('leaves the admin API out of the public OpenAPI document, and the public API off the admin listener', async (t) => {
    const { api, call } = await useAdmin(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const published = await api.get('/openapi.json');
    assert.deepEqual(
      Object.keys(published.json.paths).filter((path) => path.includes('admin')),
      [],
    );
    for (const path of [`${API_PREFIX}/me`, `${API_PREFIX}/openapi.json`, '/docs', '/healthz']) {
      const response = await call('GET', path, { token: key });
      assert.equal(response.status, 404, path);
    }
    // Its errors page leads back to the panel, not to a reference page it does not serve.
    const errors = await call('GET', '/docs/errors');
    assert.equal(errors.status, 200);
    assert.match(errors.body, /<a href="\.\.\/admin">Back to the admin panel<\/a>/);
    assert.equal(
      (await call('GET', new URL('../admin', 'http://h/docs/errors').pathname)).status,
      200,
    );
  });
});
