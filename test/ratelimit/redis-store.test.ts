import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { RateLimitStore } from '../../src/ratelimit/limiter.ts';
import { RedisRateLimitStore } from '../../src/ratelimit/redis-store.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  ownRedisSkip,
  recordingLog,
  testRedisUrl,
  useOwnRedis,
  useRedisPrefix,
} from '../helpers/redis.ts';
import { freePort } from '../helpers/serve.ts';

const redis = testRedisUrl();

async function acceptedOf(stores: RateLimitStore[], requests: number, perMinute: number) {
  const decisions = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      (stores[i % stores.length] as RateLimitStore).consume('k', { perMinute, perHour: 1000 }),
    ),
  );
  return decisions.filter((d) => d.allowed);
}

/** Redis restarting takes longer than a write landing. */
const REDIS_BACK_MS = 15_000;

if (redis.skip) {
  it('RedisRateLimitStore', { skip: redis.skip }, () => {});
} else {
  const url = redis.url as string;
  describe('RedisRateLimitStore', () => {
    it('is exact across instances sharing one Redis, on the server clock', async (t) => {
      const keyPrefix = useRedisPrefix(t, url);
      const log = recordingLog();
      const stores = [1, 2, 3].map(() => new RedisRateLimitStore({ url, keyPrefix, log }));
      t.after(() => Promise.all(stores.map((store) => store.close())));
      await Promise.all(stores.map((store) => store.connect(5000)));

      const accepted = await acceptedOf(stores, 150, 37);
      assert.equal(accepted.length, 37);
      // Each accepted request saw a distinct count: no two instances took the same slot.
      assert.deepEqual(
        accepted.map((d) => d.windows[0].remaining).sort((a, b) => a - b),
        Array.from({ length: 37 }, (_, i) => i),
      );
      for (const d of accepted) assert.ok(d.windows[0].resetSeconds <= 60);
      assert.deepEqual(log.lines, []);
    });

    it('stops the start when REDIS_URL names a database this Redis does not have', async (t) => {
      const log = recordingLog();
      const missing = new URL(url);
      missing.pathname = '/9999';
      const store = new RedisRateLimitStore({ url: missing.href, keyPrefix: 'x:', log });
      t.after(() => store.close());
      // ioredis's SELECT failed, and it went on with database 0, shared with anything else.
      await assert.rejects(store.connect(5000), {
        name: 'ConfigError',
        message:
          /^REDIS_URL: names database 9999, which this Redis does not have \(.*DB index is out of range/,
      });
    });

    it('keeps its keys under the prefix, each expiring an hour after its last use', async (t) => {
      const keyPrefix = useRedisPrefix(t, url);
      const store = new RedisRateLimitStore({ url, keyPrefix, log: recordingLog() });
      t.after(() => store.close());
      await store.connect(5000);
      await store.consume('42', { perMinute: 5, perHour: 10 });

      const client = new Redis(url);
      t.after(() => client.disconnect());
      assert.deepEqual(await client.keys(`${keyPrefix}*`), [`${keyPrefix}ratelimit:42`]);
      const ttl = await client.pttl(`${keyPrefix}ratelimit:42`);
      assert.ok(ttl > 3_500_000 && ttl <= 3_600_000, `ttl ${ttl}`);
      assert.deepEqual(store.checks(), { redis: 'ok' });
    });

    it('falls back to per-instance limits when Redis cannot be reached, and says so', async (t) => {
      const log = recordingLog();
      const store = new RedisRateLimitStore({
        url: `redis://127.0.0.1:${await freePort()}`,
        keyPrefix: 'unused:',
        log,
      });
      t.after(() => store.close());
      await store.connect(1000);
      assert.deepEqual(store.checks(), { redis: 'unreachable' });

      const accepted = await acceptedOf([store], 10, 3);
      assert.equal(accepted.length, 3);
      assert.deepEqual(
        log.lines.map((line) => line.level),
        ['warn'],
      );
      assert.match(log.lines[0]?.message ?? '', /per-instance/);
    });
  });
}

const ownSkip = redis.skip ?? ownRedisSkip();
if (ownSkip) {
  it('RedisRateLimitStore during an outage', { skip: ownSkip }, () => {});
} else {
  describe('RedisRateLimitStore during an outage', () => {
    it('says Redis refused the credentials of REDIS_URL, not that it is unreachable', async (t) => {
      const own = await useOwnRedis(t, { password: 'the-right-one' });
      for (const url of [
        own.url.replace('redis://', 'redis://:the-wrong-one@'),
        own.url, // none at all
      ]) {
        const log = recordingLog();
        const store = new RedisRateLimitStore({ url, keyPrefix: 'auth:', log });
        t.after(() => store.close());
        await store.connect(5000);
        assert.deepEqual(store.checks(), { redis: 'unreachable' });
        assert.equal((await store.consume('k', { perMinute: 5, perHour: 5 })).allowed, true);
        assert.deepEqual(
          log.lines.map((line) => [line.level, line.message]),
          [
            [
              'warn',
              'Redis refused the credentials of REDIS_URL: rate limits fall back to per-instance counting until it accepts them',
            ],
          ],
          url,
        );
        // ioredis's error holds the AUTH command it answered, password and all.
        assert.equal(log.written.length, 1);
        assert.match(log.written[0] ?? '', /WRONGPASS|NOAUTH/);
        assert.doesNotMatch(log.written[0] ?? '', /the-wrong-one|"command"/);
      }
    });

    it('answers from per-instance counts while Redis is down or frozen, and shares again when it returns', async (t) => {
      const own = await useOwnRedis(t);
      const log = recordingLog();
      const store = new RedisRateLimitStore({
        url: own.url,
        keyPrefix: 'outage:',
        log,
        commandTimeoutMs: 200,
        retryAfterFailureMs: 100,
      });
      t.after(() => store.close());
      await store.connect(5000);
      const limits = { perMinute: 1000, perHour: 1000 };
      const consume = () => store.consume('k', limits);
      const usedAgain = (what: string) =>
        eventually(
          async () => {
            await consume();
            return store.checks().redis === 'ok';
          },
          what,
          REDIS_BACK_MS,
        );
      assert.equal((await consume()).windows[0].remaining, 999);

      // Frozen: a command times out instead of hanging, and the request is still answered.
      own.freeze();
      const frozen = await consume();
      assert.equal(frozen.allowed, true);
      // The fallback holds the request Redis granted this instance before the freeze too.
      assert.equal(frozen.windows[0].remaining, 998, 'counted by the fallback, with its own share');
      assert.deepEqual(store.checks(), { redis: 'unreachable' });
      own.thaw();
      // Idle: no request comes to find out, and the store still says when Redis answers again.
      await eventually(
        async () => store.checks().redis === 'ok',
        'an idle store sees Redis answer again after a freeze',
        REDIS_BACK_MS,
      );
      await usedAgain('Redis used again after a freeze');

      // Killed: the connection drops; requests fall back at once, and Redis's own count is
      // used again after it restarts (empty: this server keeps nothing on disk).
      await own.kill();
      assert.equal((await consume()).allowed, true);
      assert.deepEqual(store.checks(), { redis: 'unreachable' });
      await own.start();
      await usedAgain('Redis used again after a restart');

      // Frozen while idle: no request times out to tell, and `/readyz` still says so.
      own.freeze();
      await eventually(
        async () => store.checks().redis === 'unreachable',
        'an idle store sees Redis freeze',
        REDIS_BACK_MS,
      );
      own.thaw();
      await eventually(
        async () => store.checks().redis === 'ok',
        'an idle store sees Redis answer again',
        REDIS_BACK_MS,
      );

      // Each outage told once as it starts and once as it ends (a restart may show as two: the
      // connection comes back before the server answers).
      const levels = log.lines.map((line) => line.level);
      assert.ok(levels.length >= 6, levels.join(' '));
      assert.deepEqual(
        levels,
        levels.map((_, i) => (i % 2 === 0 ? 'warn' : 'info')),
      );
    });
  });
}
