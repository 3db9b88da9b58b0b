import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { ADMIN_TOKEN, PREVIOUS_ADMIN_TOKEN, type TestAdmin, useAdmin } from '../helpers/admin.ts';
import { describeEachDialect, useTempDir } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  COMPANY_INACTIVE,
  NO_SUCH_RESOURCE,
  problem,
  UNAUTHENTICATED,
} from '../helpers/problems.ts';
import { statusesIn } from '../helpers/raw-http.ts';
import { category, company, employee, expense, ndjson } from '../helpers/records.ts';
import { assertRedoclyClean } from '../helpers/redocly.ts';

const ADMIN_UNAUTHENTICATED = problem(
  'unauthenticated',
  'Unauthenticated',
  401,
  'A valid admin token is required: send Authorization: Bearer <ADMIN_TOKEN>.',
);

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The key cache of the public app holds an answer for at most 1 s: poll past it. */
async function statusWithin(read: () => Promise<number>, wanted: number, ms = 5000) {
  const deadline = Date.now() + ms;
  let status = await read();
  while (status !== wanted && Date.now() < deadline) {
    await sleep(50);
    status = await read();
  }
  return status;
}

const auditLines = (lines: Array<Record<string, unknown>>) =>
  lines.filter((line) => line.audit).map((line) => line.audit);

describeEachDialect('admin API authentication', (dialect) => {
  it('refuses a missing or wrong token with 401 before anything is read', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    for (const token of [null, 'wrong-token', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1)]) {
      const response = await call('GET', '/admin/companies', { token });
      assert.equal(response.status, 401, String(token));
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="admin"');
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(response.json, ADMIN_UNAUTHENTICATED);
    }
    const refused = await call('POST', '/admin/import', {
      token: 'wrong-token',
      body: ndjson([company(2)]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(refused.status, 401);
    assert.equal((await call('GET', '/admin/companies')).json.data.length, 1, 'nothing imported');
    // The scheme's name is case-insensitive (RFC 9110 §11.1), as on the public listener.
    for (const scheme of ['bearer', 'BEARER']) {
      const answer = await call('GET', '/admin/companies', {
        token: null,
        headers: { authorization: `${scheme} ${ADMIN_TOKEN}` },
      });
      assert.equal(answer.status, 200, scheme);
    }
    // Two Authorization headers: which token was meant is unknown (a proxy may add its own),
    // so neither counts, as on the public listener.
    for (const both of [
      [`Bearer ${ADMIN_TOKEN}`, 'Bearer x'],
      ['Bearer x', `Bearer ${ADMIN_TOKEN}`],
    ]) {
      const answer = await call('GET', '/admin/companies', {
        token: null,
        headers: { authorization: both },
      });
      assert.equal(answer.status, 401, both.join(' + '));
    }
  });

  it('accepts ADMIN_TOKEN_PREVIOUS during a rotation and names each token by its label', async (t) => {
    const { call, logLines } = await useAdmin(t, dialect, { records: [company(1)] });
    assert.equal((await call('POST', '/admin/companies/1/deactivate')).status, 200);
    const previous = await call('POST', '/admin/companies/1/activate', {
      token: PREVIOUS_ADMIN_TOKEN,
    });
    assert.equal(previous.status, 200);
    assert.deepEqual(auditLines(logLines()), [
      { actor: 'platform', action: 'company.deactivate', companyId: 1 },
      { actor: 'platform:previous', action: 'company.activate', companyId: 1 },
    ]);
  });

  it('answers 429 with Retry-After to an address after 10 failed tokens, the right one included', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    const attacker = '192.0.2.7';
    for (let i = 0; i < 10; i += 1) {
      const response = await call('GET', '/admin/companies', {
        token: `guess-${i}`,
        remoteAddress: attacker,
      });
      assert.equal(response.status, 401);
    }
    const blocked = await call('GET', '/admin/companies', { remoteAddress: attacker });
    assert.equal(blocked.status, 429);
    const retryAfter = Number(blocked.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`);
    assert.deepEqual(
      blocked.json,
      problem(
        'rate_limited',
        'Too many requests',
        429,
        `Too many failed admin tokens from this address; retry after ${retryAfter} seconds.`,
      ),
    );
    // Another address is not held back by this one's failures.
    assert.equal(
      (await call('GET', '/admin/companies', { remoteAddress: '192.0.2.8' })).status,
      200,
    );
  });
});

describe('admin API failed tokens behind proxies', () => {
  const guesses = async (admin: TestAdmin, forwardedFor: (i: number) => string) => {
    for (let i = 0; i < 10; i += 1) {
      const response = await admin.call('GET', '/admin/companies', {
        token: `guess-${i}`,
        remoteAddress: '10.0.0.9',
        headers: { 'x-forwarded-for': forwardedFor(i) },
      });
      assert.equal(response.status, 401);
    }
  };
  const next = (admin: TestAdmin, forwardedFor: string) =>
    admin.call('GET', '/admin/companies', {
      remoteAddress: '10.0.0.9',
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('counts the connection’s address, whatever X-Forwarded-For says, under the public side’s TRUST_PROXY', async (t) => {
    const admin = await useAdmin(t, 'sqlite', {
      records: [company(1)],
      config: { trustProxy: true },
    });
    await guesses(admin, (i) => `192.0.2.${i}`);
    assert.equal((await next(admin, '192.0.2.200')).status, 429);
  });

  it('counts the address the proxy reports with ADMIN_TRUST_PROXY', async (t) => {
    const admin = await useAdmin(t, 'sqlite', { records: [company(1)] });
    const config = { port: 0, tokens: [], trustProxy: true };
    const trusting = await useAdmin(t, 'sqlite', {
      records: [company(1)],
      config: { admin: config },
    });
    for (const side of [admin, trusting]) await guesses(side, () => '192.0.2.7');
    assert.equal((await next(trusting, '192.0.2.7')).status, 429);
    assert.equal((await next(trusting, '192.0.2.8')).status, 200);
    assert.equal((await next(admin, '192.0.2.8')).status, 429, 'without it: the connection’s');
  });

  it('counts the address the proxy appended with ADMIN_TRUST_PROXY, not those the client wrote before it', async (t) => {
    const trusting = await useAdmin(t, 'sqlite', {
      records: [company(1)],
      config: { admin: { port: 0, tokens: [], trustProxy: true } },
    });
    // A new made-up address for every guess, as a client behind nginx's
    // $proxy_add_x_forwarded_for can send; the proxy appends the one it saw.
    await guesses(trusting, (i) => `10.9.9.${i}, 192.0.2.7`);
    assert.equal((await next(trusting, '10.9.9.200, 192.0.2.7')).status, 429);
    assert.equal((await next(trusting, '192.0.2.7, 192.0.2.8')).status, 200);
  });
});

describeEachDialect('admin API companies', (dialect) => {
  it('lists companies and shows one, 404 for an unknown id', async (t) => {
    const { call } = await useAdmin(t, dialect, {
      records: [company(1, { name: 'Acme' }), company(2, { active: false })],
    });
    const list = await call('GET', '/admin/companies');
    assert.equal(list.status, 200);
    assert.equal(list.headers['cache-control'], 'no-store');
    assert.deepEqual(list.json, {
      data: [
        { id: 1, name: 'Acme', timezone: 'Europe/Istanbul', active: true },
        { id: 2, name: 'Company 2', timezone: 'Europe/Istanbul', active: false },
      ],
    });
    assert.deepEqual((await call('GET', '/admin/companies/2')).json, { data: list.json.data[1] });
    const missing = await call('GET', '/admin/companies/9');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, problem('not_found', 'Not found', 404, 'company 9 not found.'));
    assert.deepEqual((await call('GET', '/admin/companies/x')).json.code, 'not_found');
    // Ids as the public API takes them: plain digits, anything else is no id of a company.
    for (const id of ['0x1', '+1', '%201', '1e0', '1.0', '01', 'Infinity', '9007199254740993']) {
      const loose = await call('GET', `/admin/companies/${id}`);
      assert.equal(loose.status, 404, id);
      assert.equal(loose.json.code, 'not_found', id);
      assert.equal((await call('POST', `/admin/companies/${id}/deactivate`)).status, 404, id);
    }
    // Ids the router cannot decode, or longer than its default limit: the 404 of every hook
    // (the router's own had no request id).
    for (const id of ['%FF', '%', '1'.repeat(101)]) {
      const odd = await call('GET', `/admin/companies/${id}`);
      assert.equal(odd.status, 404, id);
      assert.equal(odd.json.code, 'not_found', id);
      assert.match(String(odd.headers['x-request-id']), /^[\w-]{8,}$/, id);
    }
    assert.deepEqual((await call('GET', '/admin/companies/1')).json.data.active, true);
  });

  it('deactivates a company, whose keys then get 403, and activates it again', async (t) => {
    const { api, call, logLines } = await useAdmin(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const deactivated = await call('POST', '/admin/companies/1/deactivate');
    assert.deepEqual(deactivated.json.data.active, false);
    const refused = await api.get('/me', key);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, COMPANY_INACTIVE);
    assert.deepEqual((await call('POST', '/admin/companies/1/activate')).json.data.active, true);
    assert.equal(await statusWithin(async () => (await api.get('/me', key)).status, 200), 200);
    assert.equal((await call('POST', '/admin/companies/5/activate')).status, 404);
    // They declare no body: a field is refused as on every other operation, and nothing changes.
    for (const [body, errors] of [
      [{ x: 1 }, [{ parameter: 'x', message: 'is not a field of this body' }]],
      [[1], [{ parameter: '(body)', message: 'must be empty: this operation takes none' }]],
      [null, [{ parameter: '(body)', message: 'must be empty: this operation takes none' }]],
    ] as const) {
      const refused = await call('POST', '/admin/companies/1/deactivate', { body });
      assert.equal(refused.status, 422, JSON.stringify(body));
      assert.deepEqual(refused.json.errors, errors);
    }
    assert.equal((await call('GET', '/admin/companies/1')).json.data.active, true);
    assert.equal((await call('POST', '/admin/companies/1/activate', { body: {} })).status, 200);
    // No bytes with a JSON type is no body, as clients that always send the type mean it.
    const empty = await call('POST', '/admin/companies/1/activate', {
      body: Buffer.alloc(0),
      contentType: 'application/json',
    });
    assert.equal(empty.status, 200, empty.body);
    // JSON sent as text/plain is refused as every other type is, not read as a string.
    const text = await call('POST', '/admin/companies/1/deactivate', {
      body: Buffer.from('{}'),
      contentType: 'text/plain',
    });
    assert.equal(text.status, 415);
    assert.equal(text.json.code, 'unsupported_media_type');
    assert.deepEqual(auditLines(logLines()), [
      { actor: 'platform', action: 'company.deactivate', companyId: 1 },
      { actor: 'platform', action: 'company.activate', companyId: 1 },
      { actor: 'platform', action: 'company.activate', companyId: 1 },
      { actor: 'platform', action: 'company.activate', companyId: 1 },
    ]);
  });

  // SQLite's one writer only: registered for it alone, so that no suite reports a skip.
  if (dialect === 'sqlite')
    it('says another import or command is writing when SQLite stays locked past the busy timeout', async (t) => {
      const { api, call } = await useAdmin(t, dialect, { records: [company(1)] });
      const writer = new Database(
        api.config.database.dialect === 'sqlite' ? api.config.database.path : '',
      );
      t.after(() => writer.close());
      writer.exec('BEGIN IMMEDIATE');
      for (const [path, request] of [
        ['/admin/companies/1/deactivate', {}],
        [
          '/admin/import',
          { body: Buffer.from(ndjson([company(1)])), contentType: 'application/x-ndjson' },
        ],
      ] as const) {
        const refused = await call('POST', path, request);
        assert.equal(refused.status, 503, path);
        assert.equal(refused.headers['retry-after'], '5');
        assert.equal(
          refused.json.detail,
          'Another import or command is writing to this SQLite database, which takes one writer at a time; nothing was changed: retry when it has finished.',
        );
      }
      writer.exec('ROLLBACK');
      assert.equal((await call('GET', '/admin/companies/1')).json.data.active, true);
    });
});

describe('admin API methods', () => {
  it('answers a method a known path does not take with 405 and the methods it takes', async (t) => {
    const { admin } = await useAdmin(t, 'sqlite', { records: [company(1)] });
    const cases: Array<[method: string, path: string, allow: string]> = [
      ['PATCH', '/admin/companies', 'GET, HEAD'],
      ['OPTIONS', '/admin/companies/1', 'GET, HEAD'],
      ['DELETE', '/admin/companies/1/keys', 'GET, HEAD, POST'],
      ['GET', '/admin/companies/1/activate', 'POST'],
      ['PUT', '/admin/keys/1/revoke', 'POST'],
      ['GET', '/admin/import', 'POST'],
      ['PROPFIND', '/admin/companies', 'GET, HEAD'],
      ['TRACE', '/admin/companies/1/purge', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      for (const authorization of [`Bearer ${ADMIN_TOKEN}`, undefined]) {
        const res = await admin.inject({
          method: method as 'GET',
          url,
          headers: authorization ? { authorization } : {},
        });
        assert.equal(res.statusCode, 405, `${method} ${url}`);
        assert.equal(res.headers.allow, allow, `${method} ${url}`);
        assert.equal(res.json().code, 'method_not_allowed');
      }
    }
    // Nothing changed, and an unknown path is still 404 by any method.
    const unknown = await admin.inject({ method: 'PATCH', url: '/admin/nothing' });
    assert.equal(unknown.statusCode, 404);
    const listed = await admin.inject({
      url: '/admin/companies/1',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(listed.json().data.active, true);
  });
});

describeEachDialect('admin API purge', (dialect) => {
  it('purges a company once confirm repeats its id: its records and keys are gone', async (t) => {
    const { api, call, logLines } = await useAdmin(t, dialect, {
      records: [company(1), employee(1, 10), employee(1, 11), company(2), employee(2, 20)],
    });
    const key = await api.createKey(1);
    const other = await api.createKey(2);

    const unconfirmed = await call('POST', '/admin/companies/1/purge', { body: { confirm: 2 } });
    assert.equal(unconfirmed.status, 422);
    assert.deepEqual(unconfirmed.json.errors, [
      { parameter: 'confirm', message: 'confirm must repeat the company id (1) to purge it' },
    ]);
    assert.equal((await call('POST', '/admin/companies/1/purge', { body: {} })).status, 422);
    assert.equal((await api.get('/employees', key)).json.meta.total, 2, 'nothing was purged');

    const purged = await call('POST', '/admin/companies/1/purge', { body: { confirm: 1 } });
    assert.equal(purged.status, 200);
    assert.deepEqual(purged.json.data, {
      company: { id: 1, name: 'Company 1' },
      removed: {
        employees: 2,
        leave_types: 0,
        leaves: 0,
        expense_categories: 0,
        expenses: 0,
        receipt_files: 0,
        api_keys: 1,
      },
      receipt_files_left: [],
      deleted_values_in_wal: false,
    });
    assert.equal(await statusWithin(async () => (await api.get('/me', key)).status, 401), 401);
    assert.equal((await call('GET', '/admin/companies/1')).status, 404);
    assert.equal(
      (await api.get('/employees', other)).json.meta.total,
      1,
      'the other company stays',
    );
    const again = await call('POST', '/admin/companies/1/purge', { body: { confirm: 1 } });
    assert.equal(again.status, 404);
    // An unknown company is 404 whatever confirm says; an id past 2^53 − 1 is named as sent.
    assert.equal(
      (await call('POST', '/admin/companies/99/purge', { body: { confirm: 98 } })).status,
      404,
    );
    for (const confirm of [1, 9007199254740992]) {
      const huge = await call('POST', '/admin/companies/9007199254740993/purge', {
        body: { confirm },
      });
      assert.equal(huge.status, 404);
      assert.equal(huge.json.detail, 'company 9007199254740993 not found.');
    }
    assert.equal(
      (await call('POST', '/admin/keys/9007199254740993/revoke')).json.detail,
      'key 9007199254740993 not found.',
    );
    assert.deepEqual(auditLines(logLines()), [
      {
        actor: 'platform',
        action: 'company.purge',
        companyId: 1,
        removed: purged.json.data.removed,
      },
    ]);
  });
});

describeEachDialect('admin API keys', (dialect) => {
  it('creates a key that works at once, answered once with the raw key, and lists it by prefix only', async (t) => {
    const { api, call, logLines } = await useAdmin(t, dialect, { records: [company(1)] });
    const created = await call('POST', '/admin/companies/1/keys', {
      body: { name: 'payroll', scopes: ['leaves.read'], per_minute: 30, per_hour: 600 },
    });
    assert.equal(created.status, 201);
    const { key, ...stored } = created.json.data;
    assert.match(key, /^cdk_[0-9A-Za-z]{38}$/);
    assert.match(stored.created_at, TIMESTAMP);
    assert.deepEqual(stored, {
      id: stored.id,
      company_id: 1,
      name: 'payroll',
      prefix: key.slice(0, 12),
      scopes: ['leaves.read'],
      per_minute: 30,
      per_hour: 600,
      created_at: stored.created_at,
      last_used_at: null,
      revoked_at: null,
    });
    const me = await api.get('/me', key);
    assert.equal(me.status, 200);
    assert.deepEqual(me.json.rate_limit, { per_minute: 30, per_hour: 600 });
    // The use is written after /me answers (fire and forget): polled until it is there.
    let list = await call('GET', '/admin/companies/1/keys');
    for (let i = 0; i < 40 && list.json.data[0].last_used_at === null; i += 1) {
      await sleep(50);
      list = await call('GET', '/admin/companies/1/keys');
    }
    assert.equal(list.json.data.length, 1);
    assert.equal(list.json.data[0].prefix, key.slice(0, 12));
    assert.match(list.json.data[0].last_used_at, TIMESTAMP);
    assert.ok(!list.body.includes(key.slice(12)), 'the list never holds the key');
    assert.deepEqual(auditLines(logLines()), [
      {
        actor: 'platform',
        action: 'key.create',
        companyId: 1,
        keyId: stored.id,
        prefix: key.slice(0, 12),
        scopes: ['leaves.read'],
      },
    ]);
  });

  it('creates a key with the CLI’s defaults: both scopes, 120 a minute, 3000 an hour', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    const created = await call('POST', '/admin/companies/1/keys', { body: { name: 'bi' } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.json.data.scopes, ['leaves.read', 'expenses.read']);
    assert.equal(created.json.data.per_minute, 120);
    assert.equal(created.json.data.per_hour, 3000);
  });

  it('refuses a bad body with 422 naming each field, an unknown company with 404', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    const bad = await call('POST', '/admin/companies/1/keys', {
      body: { name: '   ', scopes: ['leaves.write'], per_minute: 0, owner: 'x' },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.code, 'validation_failed');
    assert.deepEqual(bad.json.errors.map((e: { parameter: string }) => e.parameter).sort(), [
      'name',
      'owner',
      'per_minute',
      'scopes',
    ]);
    assert.equal(bad.json.detail, 'Invalid request body fields: owner, name, scopes, per_minute.');
    const missing = await call('POST', '/admin/companies/1/keys', { body: {} });
    assert.deepEqual(missing.json.errors, [
      { parameter: 'name', message: "must have required property 'name'" },
    ]);
    // Values are taken as sent: no coercion of a boolean, number, text or null.
    for (const [body, field] of [
      [{ name: 'x', per_minute: true }, 'per_minute'],
      [{ name: 'x', per_minute: '10' }, 'per_minute'],
      [{ name: 'x', per_minute: null }, 'per_minute'],
      [{ name: 123 }, 'name'],
      [{ name: 'x', scopes: 'leaves.read' }, 'scopes'],
    ] as const) {
      const refused = await call('POST', '/admin/companies/1/keys', { body });
      assert.equal(refused.status, 422, JSON.stringify(body));
      assert.deepEqual(
        refused.json.errors.map((e: { parameter: string }) => e.parameter),
        [field],
        JSON.stringify(body),
      );
    }
    const unknown = await call('POST', '/admin/companies/4/keys', { body: { name: 'x' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.detail, 'company 4 not found.');
    assert.equal((await call('GET', '/admin/companies/4/keys')).status, 404);
    assert.equal((await call('GET', '/admin/companies/1/keys')).json.data.length, 0);
  });

  it('takes a key name of up to 100 characters without control characters, as the CLI does', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    for (const name of [
      'a\nb',
      'tab\there',
      '\u001b[31mred',
      '\u0085',
      'a\u2028b',
      'a\ud800b',
      '\udfff',
      'x'.repeat(101),
    ]) {
      const bad = await call('POST', '/admin/companies/1/keys', { body: { name } });
      assert.equal(bad.status, 422, JSON.stringify(name));
      assert.deepEqual(
        bad.json.errors,
        [
          {
            parameter: 'name',
            message:
              'must be 1 to 100 characters, not blank, without control characters (line breaks, tabs) or lone surrogates (\\ud800)',
          },
        ],
        JSON.stringify(name),
      );
    }
    for (const name of ['😀'.repeat(100), 'Ünïcødé payroll']) {
      const created = await call('POST', '/admin/companies/1/keys', { body: { name } });
      assert.equal(created.status, 201, name);
      assert.equal(created.json.data.name, name);
    }
  });

  it('refuses a JSON body that is not UTF-8 or not JSON with 400, or over 1 MiB with 413, and creates nothing', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    const latin1 = await call('POST', '/admin/companies/1/keys', {
      body: Buffer.from('{"name":"M\xfcller payroll"}', 'latin1'),
    });
    assert.equal(latin1.status, 400);
    assert.deepEqual(
      latin1.json,
      problem(
        'bad_request',
        'Bad request',
        400,
        'The request body is not UTF-8: send a JSON object encoded as UTF-8.',
      ),
    );
    for (const body of ['{"name":', '{"name":"x",}']) {
      const response = await call('POST', '/admin/companies/1/keys', { body: Buffer.from(body) });
      assert.equal(response.status, 400, body);
      assert.equal(
        response.json.detail,
        'The request body is not valid JSON: send a JSON object encoded as UTF-8.',
        body,
      );
    }
    // No bytes is no body: the fields it lacks are named.
    for (const request of [{ body: Buffer.alloc(0) }, {}]) {
      const empty = await call('POST', '/admin/companies/1/keys', request);
      assert.equal(empty.status, 422, empty.body);
      assert.deepEqual(empty.json.errors, [
        { parameter: 'name', message: "must have required property 'name'" },
      ]);
    }
    // JSON, with a key that would reach a prototype: an undeclared field, never read.
    for (const body of [
      '{"__proto__":{"x":1},"name":"x"}',
      '{"name":"x","constructor":{"prototype":{"x":1}}}',
    ]) {
      const response = await call('POST', '/admin/companies/1/keys', { body: Buffer.from(body) });
      assert.equal(response.status, 422, body);
      assert.deepEqual(response.json.errors, [
        { parameter: '(body)', message: 'has a __proto__ or constructor.prototype field' },
      ]);
    }
    // Over the 1 MiB body limit: 413, as the document says.
    const huge = await call('POST', '/admin/companies/1/keys', {
      body: { name: 'x', padding: 'x'.repeat(1024 * 1024) },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.json.code, 'content_too_large');
    assert.equal((await call('GET', '/admin/companies/1/keys')).json.data.length, 0);
    // The same name in UTF-8 is taken as it is.
    const utf8 = await call('POST', '/admin/companies/1/keys', {
      body: Buffer.from('{"name":"M\u00fcller payroll"}', 'utf8'),
    });
    assert.equal(utf8.status, 201, utf8.body);
    assert.equal(utf8.json.data.name, 'Müller payroll');
  });

  it('revokes a key: 401 on the API, revoked_at in the list, revoking again keeps the first time', async (t) => {
    const { api, call, logLines } = await useAdmin(t, dialect, { records: [company(1)] });
    const created = (await call('POST', '/admin/companies/1/keys', { body: { name: 'old' } })).json
      .data;
    // An id not in plain digits names no key: nothing is revoked.
    for (const id of [`0x${created.id.toString(16)}`, `0${created.id}`, `${created.id}e0`]) {
      assert.equal((await call('POST', `/admin/keys/${id}/revoke`)).status, 404, id);
    }
    const listed = await call('GET', '/admin/companies/1/keys');
    assert.deepEqual(
      listed.json.data.map((key: { revoked_at: string | null }) => key.revoked_at),
      [null],
    );
    const withField = await call('POST', `/admin/keys/${created.id}/revoke`, {
      body: { reason: 'leaked' },
    });
    assert.equal(withField.status, 422);
    assert.deepEqual(withField.json.errors, [
      { parameter: 'reason', message: 'is not a field of this body' },
    ]);
    const revoked = await call('POST', `/admin/keys/${created.id}/revoke`);
    assert.equal(revoked.status, 200);
    assert.match(revoked.json.data.revoked_at, TIMESTAMP);
    assert.equal(revoked.json.data.key, undefined);
    const refused = await api.get('/me', created.key);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.json, UNAUTHENTICATED);
    const again = await call('POST', `/admin/keys/${created.id}/revoke`);
    assert.equal(again.json.data.revoked_at, revoked.json.data.revoked_at);
    assert.equal((await call('POST', '/admin/keys/999/revoke')).status, 404);
    assert.deepEqual(
      auditLines(logLines()).filter((line) => (line as { action: string }).action === 'key.revoke')
        .length,
      2,
    );
  });
});

/**
 * A connection to the listener at `port` that keeps what it receives (as Latin-1 text),
 * destroyed when the test ends.
 */
function openConnection(t: TestContext, port: number) {
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  return { socket, received: () => received, closed: once(socket, 'close') };
}

/** The request line and headers of a raw `POST /admin/import` whose body says it is `length` bytes. */
const importHead = (length: number, extraHeaders = '') =>
  `POST /admin/import HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n` +
  `Content-Type: application/x-ndjson\r\n${extraHeaders}Content-Length: ${length}\r\n\r\n`;

describeEachDialect('admin API import', (dialect) => {
  it('imports an NDJSON body in one transaction, as cdapi import does', async (t) => {
    const { api, call, logLines } = await useAdmin(t, dialect);
    const imported = await call('POST', '/admin/import', {
      body: ndjson([company(3), employee(3, 30), employee(3, 31)]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(imported.status, 200);
    assert.equal(imported.json.data.records, 3);
    assert.equal(imported.json.data.counts.company, 1);
    assert.equal(imported.json.data.counts.employee, 2);
    assert.equal(imported.json.data.receipts, 0);
    assert.deepEqual(imported.json.data.company_ids, [3]);
    const key = await api.createKey(3);
    assert.equal((await api.get('/employees', key)).json.meta.total, 2);
    // An erasure: the audit line says what the import deleted, not only what it wrote.
    const erased = await call('POST', '/admin/import', {
      body: ndjson([
        { type: 'delete', resource: 'employee', company_id: 3, id: 31 },
        { type: 'delete', resource: 'employee', company_id: 3, id: 99 },
      ]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(erased.status, 200, erased.body);
    const audit = auditLines(logLines()) as Array<Record<string, unknown>>;
    assert.deepEqual(
      audit.map((line) => line.action),
      ['import', 'import'],
    );
    const { deletes, absentDeletes } = audit[1] as Record<string, Record<string, number>>;
    assert.deepEqual([deletes?.employee, absentDeletes?.employee], [2, 1]);
    // Which company each import wrote to, or deleted from.
    assert.deepEqual(
      audit.map((line) => line.companyIds),
      [[3], [3]],
    );
  });

  it('rolls back an import whose client stops sending its body, and is free for the next', async (t) => {
    const { admin, api, call } = await useAdmin(t, dialect);
    await admin.listen({ port: 0, host: '127.0.0.1' });
    const { port } = admin.server.address() as AddressInfo;
    const begun = ndjson([company(3), employee(3, 30)]);
    for (const ending of ['closed', 'timed out'] as const) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
      });
      const closed = once(socket, 'close');
      socket.write(importHead(100_000) + begun.toString());
      if (ending === 'closed') {
        await sleep(300);
        socket.end();
      } else {
        // Past HTTP_REQUEST_TIMEOUT_MS, checked once a second.
        admin.server.requestTimeout = 500;
      }
      await closed;
      // A body cut short by the client's end is refused; one that timed out gets no answer.
      assert.deepEqual(statusesIn(received), ending === 'closed' ? ['400'] : [], received);
      admin.server.requestTimeout = api.config.requestTimeoutMs;
      const next = await call('POST', '/admin/import', {
        body: ndjson([company(4)]),
        contentType: 'application/x-ndjson',
      });
      assert.equal(next.status, 200, `after a body ${ending}: ${next.body}`);
      const companies = await call('GET', '/admin/companies');
      assert.deepEqual(
        companies.json.data.map((c: { id: number }) => c.id),
        [4],
        `after a body ${ending}`,
      );
    }
  });

  it('answers a bad line before its body has all come, and the connection then serves the next request', async (t) => {
    const { admin, call } = await useAdmin(t, dialect);
    await admin.listen({ port: 0, host: '127.0.0.1' });
    const { port } = admin.server.address() as AddressInfo;
    // The bad line comes first; the rest of the body (far more than the listener reads ahead)
    // is sent only once the 422 has come.
    const bad = ndjson([company(3), { ...employee(3, 30), email: 12 }]);
    const rest = ndjson(Array.from({ length: 2000 }, (_, i) => employee(3, 100 + i)));
    const next = ndjson([company(4)]);
    const socket = connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.write(importHead(bad.length + rest.length) + bad.toString());
    const answers = () => statusesIn(received);
    await eventually(async () => answers().length > 0, 'an answer to the bad line');
    assert.deepEqual(answers(), ['422']);
    socket.write(Buffer.concat([rest, Buffer.from(importHead(next.length)), next]));
    // The listener read the rest of the body and dropped it: the next request is answered.
    await eventually(async () => answers().length === 2, 'an answer to the next request');
    assert.deepEqual(answers(), ['422', '200']);
    const companies = await call('GET', '/admin/companies');
    assert.deepEqual(
      companies.json.data.map((c: { id: number }) => c.id),
      [4],
    );
  });

  it('tells a client that asks first to send its body only once its token is accepted', async (t) => {
    const { admin, call } = await useAdmin(t, dialect);
    await admin.listen({ port: 0, host: '127.0.0.1' });
    const { port } = admin.server.address() as AddressInfo;
    const body = ndjson([company(3)]);
    const ask = (token: string) =>
      importHead(body.length, 'Expect: 100-continue\r\n').replace(ADMIN_TOKEN, token);
    for (const token of [ADMIN_TOKEN, 'wrong-token']) {
      const { socket, received, closed } = openConnection(t, port);
      socket.write(ask(token));
      await eventually(async () => statusesIn(received()).length > 0, `an answer (${token})`);
      if (token === ADMIN_TOKEN) {
        assert.deepEqual(statusesIn(received()), ['100'], received());
        socket.end(body);
        await eventually(async () => statusesIn(received()).length === 2, 'the import answer');
        assert.deepEqual(statusesIn(received()), ['100', '200'], received());
      } else {
        // Refused without being asked for the body, and the connection closes after the answer
        // (its body may never come).
        await closed;
        assert.deepEqual(statusesIn(received()), ['401'], received());
        assert.match(received(), /\r\nconnection: close\r\n/i, received());
      }
    }
    const companies = await call('GET', '/admin/companies');
    assert.deepEqual(
      companies.json.data.map((c: { id: number }) => c.id),
      [3],
    );
  });

  it('closes the connection after answering a body that stopped decoding before it had all come', async (t) => {
    const { admin } = await useAdmin(t, dialect);
    await admin.listen({ port: 0, host: '127.0.0.1' });
    const { port } = admin.server.address() as AddressInfo;
    const { socket, received, closed } = openConnection(t, port);
    // Said to be gzip, and not: the rest of its 100,000 bytes could not be read past the error.
    socket.write(`${importHead(100_000, 'Content-Encoding: gzip\r\n')}not gzip data at all`);
    await closed;
    // One answer, which says the connection closes (at once: the rest is not waited for).
    assert.deepEqual(statusesIn(received()), ['400'], received());
    assert.match(received(), /\r\nconnection: close\r\n/i, received());
    assert.doesNotMatch(received(), /\r\nkeep-alive:/i, received());
  });

  it('closes within the request timeout while an import body stalls, rolling it back', async (t) => {
    const { admin, api } = await useAdmin(t, dialect, { config: { requestTimeoutMs: 1000 } });
    await admin.listen({ port: 0, host: '127.0.0.1' });
    const { port } = admin.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(importHead(100_000) + ndjson([company(3)]).toString());
    await sleep(300);
    const started = Date.now();
    await admin.close();
    socket.destroy();
    assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`);
    const companies = await api.handle.db.selectFrom('companies').select('id').execute();
    assert.deepEqual(companies, []);
  });

  it('applies delete lines, as cdapi import does: the record leaves the API', async (t) => {
    const { api, call } = await useAdmin(t, dialect, {
      records: [company(3), employee(3, 30), employee(3, 31)],
    });
    const deleted = await call('POST', '/admin/import', {
      body: ndjson([
        { type: 'delete', resource: 'employee', company_id: 3, id: 31 },
        // An id the company does not have: a no-op, so a delta can be pushed again.
        { type: 'delete', resource: 'employee', company_id: 3, id: 99 },
      ]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(deleted.status, 200, deleted.body);
    assert.equal(deleted.json.data.deletes.employee, 2);
    assert.equal(deleted.json.data.absent_deletes.employee, 1);
    const key = await api.createKey(3);
    assert.deepEqual(
      (await api.get('/employees', key)).json.data.map((e: { id: number }) => e.id),
      [30],
    );
    assert.equal((await api.get('/employees/31', key)).status, 404);
  });

  it('imports nothing from a body with a bad line, and names the line and field in a 422', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const failed = await call('POST', '/admin/import', {
      body: ndjson([company(3), employee(3, 30), employee(3, 31, { email: 7 })]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(failed.status, 422);
    const { detail, errors, ...rest } = failed.json;
    assert.deepEqual(rest, {
      type: '/docs/errors#import_failed',
      title: 'Import failed',
      status: 422,
      code: 'import_failed',
    });
    assert.equal(errors.length, 1);
    assert.equal(errors[0].line, 3);
    assert.equal(errors[0].field, 'email');
    assert.equal(detail, `line 3: email: ${errors[0].message}; nothing was imported.`);
    assert.deepEqual((await call('GET', '/admin/companies')).json, { data: [] });
  });

  it('refuses a body that names a receipt image: a body has no folder to read it from', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const failed = await call('POST', '/admin/import', {
      body: ndjson([
        company(3),
        employee(3, 30),
        category(3, 1),
        expense(3, 500, 30, 1, { receipt: { original: 'receipts/500.jpg' } }),
      ]),
      contentType: 'application/x-ndjson',
    });
    assert.equal(failed.status, 422);
    assert.deepEqual(failed.json.errors, [
      { line: 4, field: 'receipt.original', message: 'file receipts/500.jpg not found' },
    ]);
  });

  it('decodes a gzip, deflate or br body, and refuses another coding (415) or one that does not decode (400), changing nothing', async (t) => {
    const { call } = await useAdmin(t, dialect, { records: [company(1)] });
    const lines = Buffer.from(ndjson([company(2), employee(2, 20)]));
    for (const [coding, encode] of [
      ['gzip', gzipSync],
      ['x-gzip', gzipSync],
      ['DEFLATE', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const imported = await call('POST', '/admin/import', {
        body: encode(lines),
        contentType: 'application/x-ndjson',
        headers: { 'content-encoding': coding },
      });
      assert.equal(imported.status, 200, `${coding}: ${imported.body}`);
      assert.deepEqual(imported.json.data.company_ids, [2]);
    }
    const zipped = await call('POST', '/admin/companies/1/keys', {
      body: gzipSync(JSON.stringify({ name: 'zipped' })),
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(zipped.status, 201, zipped.body);
    assert.equal(zipped.json.data.name, 'zipped');

    const zstd = await call('POST', '/admin/companies/1/keys', {
      body: Buffer.from('{"name":"zstd"}'),
      headers: { 'content-encoding': 'zstd' },
    });
    assert.equal(zstd.status, 415);
    assert.equal(zstd.json.code, 'unsupported_media_type');
    assert.equal(zstd.headers['accept-encoding'], 'gzip, deflate, br, identity');
    const plain = await call('POST', '/admin/companies/1/keys', {
      body: Buffer.from('{"name":"plain"}'),
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(plain.status, 400);
    assert.equal(plain.json.code, 'bad_request');
    assert.equal(
      plain.json.detail,
      'The request body is not valid gzip data, as its Content-Encoding says.',
    );
    const cut = await call('POST', '/admin/import', {
      body: gzipSync(ndjson([company(3), employee(3, 30), employee(3, 31)])).subarray(0, 60),
      contentType: 'application/x-ndjson',
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(cut.status, 400, cut.body);
    assert.equal(cut.json.code, 'bad_request');
    // Decoded past the 1 MiB limit of a JSON body: 413, whatever its compressed size.
    const inflated = await call('POST', '/admin/companies/1/keys', {
      body: gzipSync(JSON.stringify({ name: 'big', padding: 'x'.repeat(2 * 1024 * 1024) })),
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(inflated.status, 413);
    assert.equal(inflated.json.code, 'content_too_large');

    const companies = await call('GET', '/admin/companies', {
      headers: { 'content-encoding': 'zstd' },
    });
    assert.equal(companies.status, 200, 'a request without a body has nothing to decode');
    assert.deepEqual(
      companies.json.data.map((c: { id: number }) => c.id),
      [1, 2],
    );
    const keys = (await call('GET', '/admin/companies/1/keys')).json.data;
    assert.deepEqual(
      keys.map((k: { name: string }) => k.name),
      ['zipped'],
    );
  });

  it('answers 415 to a body that is not NDJSON, and to no body', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const json = await call('POST', '/admin/import', { body: { type: 'company' } });
    assert.equal(json.status, 415);
    assert.equal(json.json.code, 'unsupported_media_type');
    const none = await call('POST', '/admin/import');
    assert.equal(none.status, 415);
    assert.equal(none.json.code, 'unsupported_media_type');
  });
});

describeEachDialect('admin listener', (dialect) => {
  it('serves its own OpenAPI document, which lists every admin operation and nothing of the API', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const document = await call('GET', '/admin/openapi.json', { token: null });
    assert.equal(document.status, 200);
    const operations = Object.entries(document.json.paths as Record<string, object>).flatMap(
      ([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(operations.sort(), [
      'GET /admin/companies',
      'GET /admin/companies/{id}',
      'GET /admin/companies/{id}/keys',
      'POST /admin/companies/{id}/activate',
      'POST /admin/companies/{id}/deactivate',
      'POST /admin/companies/{id}/keys',
      'POST /admin/companies/{id}/purge',
      'POST /admin/import',
      'POST /admin/keys/{keyId}/revoke',
    ]);
    const paths = document.json.paths;
    // The import's NDJSON body, read as a stream, is documented though no schema validates it.
    const upload = paths['/admin/import'].post.requestBody;
    assert.equal(upload.required, true);
    assert.deepEqual(Object.keys(upload.content), ['application/x-ndjson', 'application/ndjson']);
    assert.match(upload.content['application/x-ndjson'].example, /^\{"type":"company"/);
    // Every JSON body can be refused as unreadable (400) or over the body limit (413).
    for (const path of ['/admin/companies/{id}/keys', '/admin/companies/{id}/purge']) {
      const codes = Object.keys(paths[path].post.responses);
      assert.ok(codes.includes('400') && codes.includes('413'), `${path}: ${codes}`);
    }
  });

  it('publishes a document that passes `redocly lint` with the recommended rules', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const file = join(useTempDir(t), 'admin-openapi.json');
    writeFileSync(file, (await call('GET', '/admin/openapi.json', { token: null })).body);
    assertRedoclyClean(file);
  });

  it('serves the panel without a token, under a policy that runs only its own script, and sets no cookie', async (t) => {
    const { admin } = await useAdmin(t, dialect);
    for (const [path, type] of [
      ['/admin', 'text/html; charset=utf-8'],
      ['/admin/panel.js', 'text/javascript; charset=utf-8'],
      ['/admin/panel.css', 'text/css; charset=utf-8'],
    ] as const) {
      const response = await admin.inject(path);
      assert.equal(response.statusCode, 200, path);
      assert.equal(response.headers['content-type'], type);
      assert.match(String(response.headers['content-security-policy']), /script-src 'self';/);
      assert.match(String(response.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(response.headers['set-cookie'], undefined);
    }
    const page = (await admin.inject('/admin')).body;
    assert.doesNotMatch(
      page,
      /<script>|\son[a-z]+=|https?:\/\//,
      'no inline script, handler or remote URL',
    );
  });

  it('announces half the keep-alive timeout it enforces, as the public listener does', async (t) => {
    const { api, call } = await useAdmin(t, dialect);
    const answer = await call('GET', '/admin/companies');
    const half = Math.floor(api.config.keepAliveTimeoutMs / 2000);
    assert.equal(answer.headers['keep-alive'], `timeout=${half}`);
  });

  it('serves the page its problems’ type links to', async (t) => {
    const { admin, call } = await useAdmin(t, dialect);
    const refused = await call('GET', '/admin/companies', { token: 'wrong-token' });
    const page = await admin.inject(String(refused.json.type).replace(/#.*/, ''));
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.body, /<section id="unauthenticated">/);
    assert.match(page.body, /<section id="import_failed">/);
  });

  it('answers an unknown admin path with the 404 problem', async (t) => {
    const { call } = await useAdmin(t, dialect);
    const response = await call('GET', '/admin/nothing');
    assert.equal(response.status, 404);
    assert.deepEqual(response.json, NO_SUCH_RESOURCE);
  });
});
