import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledQuery } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { insertApiKey } from '../../src/db/keys.queries.ts';
import { createAuthenticator } from '../../src/http/auth.ts';
import { importFile } from '../../src/import/importer.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { SCOPES } from '../../src/keys/scopes.ts';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { company, writeNdjson } from '../helpers/records.ts';

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

describeEachDialect('the key cache', (dialect) => {
  it('reads a key in use again before its entry expires, once for a burst of requests', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    await importFile(
      handle,
      new FileReceiptStore(join(dir, 'store')),
      writeNdjson(dir, [company(1)]),
    );
    const generated = generateApiKey();
    await insertApiKey(handle.db, {
      companyId: 1,
      name: 'cache',
      prefix: generated.prefix,
      hash: generated.hash,
      scopes: [...SCOPES],
      perMinute: 1_000_000,
      perHour: 1_000_000,
    });
    const { db, reads } = countingKeyReads(handle.db);
    let now = 1_000_000;
    const authenticator = createAuthenticator({
      primaryDb: db,
      limiter: new MemoryRateLimitStore(),
      onWriteError: (error) => assert.fail(String(error)),
      now: () => now,
    });
    const request = () =>
      authenticator.authenticate(
        {
          headers: { authorization: `Bearer ${generated.key}` },
          raw: { rawHeaders: ['Authorization', `Bearer ${generated.key}`] },
          routeOptions: { config: { scope: null } },
        } as unknown as FastifyRequest,
        { headers: () => {} } as unknown as FastifyReply,
      );
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
});
