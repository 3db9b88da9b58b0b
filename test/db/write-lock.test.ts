import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { createAuthenticator } from '../../src/http/auth.ts';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.ts';
import { useAdmin } from '../helpers/admin.ts';
import { authenticateKey, companyWithKey } from '../helpers/authenticate.ts';
import { useDatabase } from '../helpers/databases.ts';
import { company, ndjson } from '../helpers/records.ts';

/**
 * SQLite's write lock taken by another connection, as `cdapi import` in another process takes
 * it for the whole import; released when the test ends if the test has not released it.
 */
function holdWriteLock(t: TestContext, handle: DatabaseHandle) {
  assert.equal(handle.dialect, 'sqlite');
  const other = new SqliteDatabase(handle.sqlite.name);
  other.exec('BEGIN IMMEDIATE');
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    other.exec('COMMIT');
  };
  t.after(() => {
    release();
    other.close();
  });
  return { release, held: () => held };
}

const addCompany = (id: number) => (db: Db) =>
  db
    .insertInto('companies')
    .values({ id, name: `Company ${id}`, timezone: 'UTC', active: 1 })
    .execute();

describe("SQLite's write lock, taken by another connection", () => {
  it('is waited for with the event loop free, and given up after the wait allowed', async (t) => {
    // better-sqlite3's own wait (this connection's busy timeout, 5 s) would hold the event loop:
    // the timer that releases the lock could not run, and the write would fail after 5 s.
    const { handle } = await useDatabase(t, 'sqlite');
    const lock = holdWriteLock(t, handle);
    setTimeout(lock.release, 100);
    await handle.write(addCompany(1));
    assert.equal(lock.held(), false);
    const stored = await handle.db.selectFrom('companies').select('id').execute();
    assert.deepEqual(stored, [{ id: 1 }]);

    const again = holdWriteLock(t, handle);
    const order: string[] = [];
    setImmediate(() => order.push('the event loop turned'));
    await assert.rejects(handle.write(addCompany(2), 200), { code: 'SQLITE_BUSY' });
    order.push('the write gave up');
    assert.deepEqual(order, ['the event loop turned', 'the write gave up']);
    assert.equal(again.held(), true);
  });

  it("does not hold a request for its key's last_used_at: written once the lock is free", async (t) => {
    const { handle } = await useDatabase(t, 'sqlite');
    const { key, keyId } = await companyWithKey(t, handle, 'in use during an import');
    const errors: unknown[] = [];
    const writes: Array<{ waitMs: number | undefined; settled: Promise<string> }> = [];
    let now = 1_000_000;
    const authenticator = createAuthenticator({
      primaryDb: handle.db,
      writePrimary: (write, waitMs) => {
        const writing = handle.write(write, waitMs);
        writes.push({
          waitMs,
          settled: writing.then(
            () => 'written',
            (error) => error.code,
          ),
        });
        return writing;
      },
      limiter: new MemoryRateLimitStore(),
      onWriteError: (error) => errors.push(error),
      now: () => now,
    });
    const request = () => authenticateKey(authenticator, key);
    const lastUsed = async () =>
      (
        await handle.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('id', '=', keyId)
          .executeTakeFirstOrThrow()
      ).last_used_at;

    const lock = holdWriteLock(t, handle);
    await request();
    assert.equal(writes.length, 1);
    assert.equal(writes[0]?.waitMs, 0, 'tried once: a request never waits for the lock');
    assert.equal(await writes[0]?.settled, 'SQLITE_BUSY');
    lock.release();
    assert.equal(await lastUsed(), null);

    now += 4_000;
    await request();
    assert.equal(writes.length, 1, 'not tried again within 5 s');

    now += 1_000;
    await request();
    assert.equal(await writes[1]?.settled, 'written');
    assert.notEqual(await lastUsed(), null);
    assert.deepEqual(errors, [], 'a taken lock is not an error to report');
  });

  it('is waited for by the admin API without holding the event loop', async (t) => {
    const { api, call } = await useAdmin(t, 'sqlite', { records: [company(1)] });
    const lock = holdWriteLock(t, api.handle);
    setTimeout(lock.release, 100);
    const created = await call('POST', '/admin/companies/1/keys', { body: { name: 'after' } });
    assert.equal(created.status, 201, created.body);
    assert.equal(lock.held(), false);
  });

  it('held past the wait, answers the admin API 503, on its threads too', async (t) => {
    const { api, call } = await useAdmin(t, 'sqlite', { records: [company(1)] });
    // The wait the import's and the purge's threads take from the connection that starts them.
    assert.equal(api.handle.dialect, 'sqlite');
    api.handle.sqlite.pragma('busy_timeout = 200');
    const lock = holdWriteLock(t, api.handle);
    const body = { body: ndjson([company(2)]), contentType: 'application/x-ndjson' };
    for (const [path, request] of [
      ['/admin/import', body],
      ['/admin/companies/1/purge', { body: { confirm: 1 } }],
    ] as const) {
      const refused = await call('POST', path, request);
      assert.equal(refused.status, 503, `${path}: ${refused.body}`);
      assert.equal(refused.json.code, 'service_unavailable');
    }
    lock.release();
    assert.equal((await call('POST', '/admin/import', body)).status, 200);
  });
});
