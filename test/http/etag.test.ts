import assert from 'node:assert/strict';
import { it } from 'node:test';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { employee, smallCompany } from '../helpers/records.ts';

const PATHS = [
  '/employees',
  '/employees/1',
  '/leaves',
  '/leaves/1',
  '/expenses?sort=-amount',
  '/expenses/1',
  '/leave-types',
  '/expense-categories',
  '/changes',
];

describeEachDialect('conditional requests', (dialect) => {
  for (const responseCacheMb of [64, 0]) {
    it(`answer 304 to a matching If-None-Match until the data changes (response cache ${responseCacheMb} MB)`, async (t) => {
      const api = await useApi(t, dialect, { records: [], config: { responseCacheMb } });
      await api.load([...smallCompany(1, 0), ...smallCompany(2, 100)]);
      const key = await api.createKey(1);
      const tags = new Map<string, string>();
      for (const path of PATHS) {
        const first = await api.get(path, key);
        assert.equal(first.status, 200, path);
        const etag = String(first.headers.etag);
        assert.match(etag, /^W\/"[A-Za-z0-9_-]{27}"$/, path);
        tags.set(path, etag);
        // Compressed or not, the same answer has the same tag; either says it varies by
        // Accept-Encoding, once.
        const gzip = await api.get(path, key, { headers: { 'accept-encoding': 'gzip' } });
        assert.equal(gzip.headers.etag, etag, path);
        assert.equal(first.headers.vary, 'accept-encoding', path);
        assert.equal(gzip.headers.vary, 'accept-encoding', path);
        for (const condition of [etag, etag.slice(2), `"x", ${etag}`, '*']) {
          const again = await api.get(path, key, { headers: { 'if-none-match': condition } });
          assert.equal(again.status, 304, `${path} ${condition}`);
          assert.equal(again.body, '');
          // RFC 9110 §8.6: a 304's Content-Length, if any, is the 200's; 0 would mislead caches.
          assert.equal(again.headers['content-length'], undefined, `${path} ${condition}`);
          assert.equal(again.headers.etag, etag);
          assert.equal(again.headers.vary, 'accept-encoding', `${path} ${condition}`);
          const head = await api.get(path, key, {
            method: 'HEAD',
            headers: { 'if-none-match': condition },
          });
          assert.equal(head.status, 304, `HEAD ${path} ${condition}: ${head.body}`);
          assert.equal(head.headers['content-length'], undefined, `HEAD ${path} ${condition}`);
          assert.equal(head.headers.etag, etag);
          assert.ok(again.headers.ratelimit, 'a 304 is a counted request');
        }
        const other = await api.get(path, key, { headers: { 'if-none-match': 'W/"other"' } });
        assert.equal(other.status, 200);
        // Other preconditions are ignored on a read (docs/api.md): the whole answer, as without.
        for (const [name, value] of [
          ['if-match', 'W/"other"'],
          ['if-match', etag],
          ['if-unmodified-since', 'Mon, 01 Jan 2001 00:00:00 GMT'],
          ['if-modified-since', 'Wed, 01 Jan 2100 00:00:00 GMT'],
          ['if-range', 'W/"other"'],
        ] as const) {
          const ignored = await api.get(path, key, {
            headers: { [name]: value, range: 'bytes=0-1' },
          });
          assert.equal(ignored.status, 200, `${path} ${name}`);
          assert.equal(ignored.body, first.body, `${path} ${name}`);
        }
      }
      // Another company's import changes none of company 1's answers.
      await api.load([employee(2, 101, { last_name: 'Elsewhere' })]);
      for (const path of PATHS) {
        const res = await api.get(path, key, { headers: { 'if-none-match': tags.get(path) } });
        assert.equal(res.status, 304, path);
      }
      // Company 1's change: the answers that show the employee change their tag.
      await api.load([employee(1, 1, { last_name: 'Changed' })]);
      for (const path of ['/employees', '/employees/1', '/leaves/1', '/expenses/1', '/changes']) {
        const res = await api.get(path, key, { headers: { 'if-none-match': tags.get(path) } });
        assert.equal(res.status, 200, path);
        assert.notEqual(res.headers.etag, tags.get(path));
      }
    });
  }

  it('gives no tag to errors, which still vary by Accept-Encoding', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    const missing = await api.get('/employees/999', key, { headers: { 'if-none-match': '*' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.etag, undefined);
    // Though an error may go out compressed too: every answer of an operation says it varies.
    assert.equal(missing.headers.vary, 'accept-encoding');
    const invalid = await api.get('/employees?page=0', key);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.headers.vary, 'accept-encoding');
    const unauthenticated = await api.get('/employees', null);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.headers.vary, 'accept-encoding');
  });

  it('says every text outside the operations varies by Accept-Encoding, compressed or not; images do not', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const paths = ['/docs/', '/docs/json', '/docs/static/index.css', '/docs/errors', '/healthz'];
    for (const url of [...paths, '/api/company/v1/openapi.json']) {
      for (const coding of ['identity', 'gzip']) {
        const response = await api.app.inject({ url, headers: { 'accept-encoding': coding } });
        assert.equal(response.statusCode, 200, `${url} ${coding}`);
        assert.equal(response.headers.vary, 'accept-encoding', `${url} ${coding}`);
      }
    }
    const favicon = await api.app.inject({ url: '/docs/static/favicon-32x32.png' });
    assert.equal(favicon.statusCode, 200);
    assert.equal(favicon.headers.vary, undefined);
    // A 304 says what its 200 would (it has no type of its own to tell).
    for (const [url, vary] of [
      ['/docs/static/index.css', 'accept-encoding'],
      ['/docs/static/favicon-32x32.png', undefined],
    ] as const) {
      const { etag } = (await api.app.inject({ url })).headers;
      const again = await api.app.inject({ url, headers: { 'if-none-match': String(etag) } });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.headers.vary, vary, url);
    }
  });

  it("compares the reference page's static files' tags strongly: If-Match and If-Range of their weak tag fail", async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    const url = '/docs/static/index.css';
    const whole = await api.app.inject({ url });
    const etag = String(whole.headers.etag);
    assert.match(etag, /^W\//);
    const lastModified = String(whole.headers['last-modified']);
    const ask = (headers: Record<string, string>, path = url) =>
      api.app.inject({ url: path, headers });
    // RFC 9110 §13.1.1: If-Match compares strongly, which no weak tag passes; `*` any file.
    for (const ifMatch of [etag, etag.slice(2), `"other", ${etag}`]) {
      const failed = await ask({ 'if-match': ifMatch });
      assert.equal(failed.statusCode, 412, ifMatch);
      assert.equal(failed.json().code, 'precondition_failed');
    }
    assert.equal((await ask({ 'if-match': '*' })).statusCode, 200);
    assert.equal((await ask({ 'if-match': etag }, '/docs/static/missing.css')).statusCode, 404);
    // §13.1.5: an If-Range tag compares strongly too: the whole file, not the range.
    for (const ifRange of [etag, etag.slice(2)]) {
      const full = await ask({ 'if-range': ifRange, range: 'bytes=0-9' });
      assert.equal(full.statusCode, 200, ifRange);
      assert.equal(full.body, whole.body, ifRange);
    }
    const partial = await ask({ 'if-range': lastModified, range: 'bytes=0-9' });
    assert.equal(partial.statusCode, 206);
    assert.equal(partial.body, whole.body.slice(0, 10));
    assert.equal((await ask({ range: 'bytes=0-9' })).statusCode, 206);
  });

  it('tags the API description and the errors page as it tags answers: 304 for their tag, 200 for another', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    const documents = ['/api/company/v1/openapi.json', '/docs/json', '/docs/yaml', '/docs/errors'];
    for (const url of documents) {
      const first = await api.app.inject({ url });
      assert.equal(first.statusCode, 200, url);
      const etag = String(first.headers.etag);
      assert.match(etag, /^W\/"[\w-]{27}"$/, url);
      const gzip = await api.app.inject({ url, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gzip.headers.etag, etag, `${url}: a compressed body is the same answer`);
      for (const condition of [etag, etag.slice(2), '*']) {
        for (const method of ['GET', 'HEAD'] as const) {
          const again = await api.app.inject({
            method,
            url,
            headers: { 'if-none-match': condition },
          });
          assert.equal(again.statusCode, 304, `${method} ${url} ${condition}`);
          assert.equal(again.body, '', url);
          assert.equal(again.headers.etag, etag, url);
          assert.equal(again.headers['content-length'], undefined, url);
        }
      }
      const other = await api.app.inject({ url, headers: { 'if-none-match': 'W/"other"' } });
      assert.equal(other.statusCode, 200, url);
      assert.equal(other.body, first.body, url);
    }
    // Kept and asked again by browsers too (the API's answers say no-store).
    const description = await api.app.inject({ url: '/api/company/v1/openapi.json' });
    assert.equal(description.headers['cache-control'], 'no-cache');
    // The probes say how the instance is now: never a 304.
    const probe = await api.app.inject({ url: '/healthz', headers: { 'if-none-match': '*' } });
    assert.equal(probe.statusCode, 200);
    assert.equal(probe.headers.etag, undefined);
  });
});
