import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import type { CompiledQuery } from 'kysely';
import type { Dialect } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { createAuthenticator } from '../../src/http/auth.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.ts';
import { authenticateKey, companyWithKey } from '../helpers/authenticate.ts';
import { describeEachDialect, useDatabase } from '../helpers/databases.ts';

/**
 * The database as the authenticator sees it, counting the statements that read the api_keys
 * table, begun and answered. The key look-up is a prepared query (`preparedQuery`): built
 * once, then run with `executeQuery`, which is where each read is seen.
 */
function countingKeyReads(db: Db) {
  const reads = { count: 0, answered: 0 };
  const counted = new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (property === 'executeQuery') {
        return async (query: CompiledQuery) => {
          const read = /^select .*"api_keys"/.test(query.sql);
          if (read) reads.count += 1;
          try {
            return await target.executeQuery(query);
          } finally {
            if (read) reads.answered += 1;
          }
        };
      }
      // Kysely's methods read private fields: they run on the database itself.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: counted, reads };
}

/** A company's key, and an authenticator over a database that counts its key reads. */
async function keyWithCountedReads(t: TestContext, dialect: Dialect, now: () => number) {
  const { handle } = await useDatabase(t, dialect);
  const { key } = await companyWithKey(t, handle, 'cache');
  const { db, reads } = countingKeyReads(handle.db);
  const authenticator = createAuthenticator({
    primaryDb: db,
    writePrimary: (write) => write(db),
    limiter: new MemoryRateLimitStore(),
    onWriteError: (error) => assert.fail(String(error)),
    now,
  });
  return { key, reads, authenticator };
}

describeEachDialect('the key cache', (dialect) => {
  it('reads a key in use again before its entry expires, once for a burst of requests', async (t) => {
    let now = 1_000_000;
    const { key, reads, authenticator } = await keyWithCountedReads(t, dialect, () => now);
    const request = () => authenticateKey(authenticator, key);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    /** Until every read begun has been answered and cached. */
    const settled = async () => {
      while (reads.answered < reads.count) await pause();
      await pause();
    };

    await Promise.all([request(), request(), request()]);
    assert.equal(reads.count, 1, 'three requests with no entry share one read');
    assert.deepEqual({ ...authenticator.keyCache }, { hits: 0, misses: 3 });

    now += 400;
    await request();
    await settled();
    assert.equal(reads.count, 1, 'an entry in the first half of its second is not read again');

    now += 200;
    await request();
    await settled();
    assert.equal(reads.count, 2, 'in the second half it is, while the request is answered from it');

    // Past the first read's second, within the second read's: still answered from the cache.
    now += 500;
    await request();
    assert.deepEqual({ ...authenticator.keyCache }, { hits: 3, misses: 3 });

    now += 2_000;
    await request();
    assert.deepEqual({ ...authenticator.keyCache }, { hits: 3, misses: 4 }, 'expired: read');
  });

  it('keeps a key in use cached while made-up keys are sent by the thousand', async (t) => {
    const { key, reads, authenticator } = await keyWithCountedReads(t, dialect, () => 1_000_000);
    await authenticateKey(authenticator, key);
    assert.equal(reads.count, 1);
    // More made-up keys (well-formed, so each is read) than the cache holds entries.
    for (let i = 0; i < 12_000; i++) {
      await assert.rejects(authenticateKey(authenticator, generateApiKey().key), {
        code: 'unauthenticated',
      });
    }
    assert.equal(reads.count, 12_001);
    await authenticateKey(authenticator, key);
    assert.equal(reads.count, 12_001, 'the key in use was answered from the cache');
  });
});
