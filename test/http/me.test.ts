import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../src/db/database.ts';
import { formatTimestamp } from '../../src/time.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { company } from '../helpers/records.ts';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The current time as the API writes timestamps (whole seconds, so it brackets a request). */
const nowSecond = () => formatTimestamp(new Date());

async function storedLastUsedAt(db: Db, keyId: number): Promise<string | null> {
  const row = await db
    .selectFrom('api_keys')
    .select('last_used_at')
    .where('id', '=', keyId)
    .executeTakeFirstOrThrow();
  return row.last_used_at;
}

/** The write is fire-and-forget: poll until the row holds a value (at most 1 s). */
async function pollStoredLastUsedAt(db: Db, keyId: number): Promise<string | null> {
  const deadline = Date.now() + 1000;
  let value = await storedLastUsedAt(db, keyId);
  while (value === null && Date.now() < deadline) {
    await sleep(20);
    value = await storedLastUsedAt(db, keyId);
  }
  return value;
}

describeEachDialect('GET /me', (dialect) => {
  it('shows the company, the key, the access mode and the key’s own rate limits', async (t) => {
    const api = await useApi(t, dialect, {
      records: [
        company(1, { name: 'Acme Ltd', timezone: 'Europe/Berlin' }),
        company(2, { name: 'Other' }),
      ],
    });
    await api.createKey(2, { name: 'other company key' });
    const key = await api.createKey(1, {
      name: 'payroll sync',
      scopes: ['leaves.read'],
      perMinute: 7,
      perHour: 70,
    });
    const before = nowSecond();
    const res = await api.get('/me', key);
    const after = nowSecond();
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'no-store');

    const lastUsedAt = res.json.api_key.last_used_at;
    assert.match(lastUsedAt, TIMESTAMP);
    assert.ok(before <= lastUsedAt && lastUsedAt <= after, `${before} ≤ ${lastUsedAt} ≤ ${after}`);
    assert.deepEqual(res.json, {
      company: { id: 1, name: 'Acme Ltd', timezone: 'Europe/Berlin' },
      api_key: { id: 2, name: 'payroll sync', scopes: ['leaves.read'], last_used_at: lastUsedAt },
      access: 'read-only',
      rate_limit: { per_minute: 7, per_hour: 70 },
    });
  });

  it('lists every scope of a key that has both', async (t) => {
    const api = await useApi(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1, { scopes: ['leaves.read', 'expenses.read'] });
    const res = await api.get('/me', key);
    assert.deepEqual(res.json.api_key.scopes, ['leaves.read', 'expenses.read']);
  });

  it('shows the time of the current request, not of the stored last use', async (t) => {
    const api = await useApi(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const first = await api.get('/me', key);
    const keyId = first.json.api_key.id;
    assert.equal(await pollStoredLastUsedAt(api.handle.db, keyId), first.json.api_key.last_used_at);

    // Into the next second, so this request's time differs from the stored one.
    await sleep(1100);
    const before = nowSecond();
    const second = await api.get('/me', key);
    const after = nowSecond();
    const shown = second.json.api_key.last_used_at;
    assert.ok(shown > first.json.api_key.last_used_at, `${shown} after the first request`);
    assert.ok(before <= shown && shown <= after, `${before} ≤ ${shown} ≤ ${after}`);
  });

  it('writes last_used_at once for requests in quick succession', async (t) => {
    const api = await useApi(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const first = await api.get('/me', key);
    assert.equal(first.status, 200, first.body);
    const keyId = first.json.api_key.id;
    const firstSecond = first.json.api_key.last_used_at;
    assert.equal(await pollStoredLastUsedAt(api.handle.db, keyId), firstSecond);

    await sleep(1100);
    const later = [];
    for (let i = 0; i < 5; i += 1) later.push(await api.get('/me', key));
    for (const res of later) {
      assert.equal(res.status, 200, res.body);
      assert.notEqual(res.json.api_key.last_used_at, firstSecond);
    }
    // Give a (wrongly) issued fire-and-forget write time to land before reading the row.
    await sleep(200);
    assert.equal(await storedLastUsedAt(api.handle.db, keyId), firstSecond);
  });

  it('counts any request with the key as a use', async (t) => {
    const api = await useApi(t, dialect, { records: [company(1)] });
    const key = await api.createKey(1);
    const before = nowSecond();
    const res = await api.get('/employees', key);
    const after = nowSecond();
    assert.equal(res.status, 200, res.body);
    const stored = await pollStoredLastUsedAt(api.handle.db, 1);
    assert.ok(stored !== null && before <= stored && stored <= after, `${stored}`);
  });
});
