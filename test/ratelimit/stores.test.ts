import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { rateLimitHeaders } from '../../src/ratelimit/headers.ts';
import type { RateLimitDecision, RateLimitStore, RateLimits } from '../../src/ratelimit/limiter.ts';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.ts';
import { RedisRateLimitStore } from '../../src/ratelimit/redis-store.ts';
import { recordingLog, testRedisUrl, useRedisPrefix } from '../helpers/redis.ts';

// A realistic epoch base, so the arithmetic runs on the magnitudes Date.now() produces.
const T0 = 1_750_000_000_000;
const at = (seconds: number): number => T0 + seconds * 1000;

type MakeStore = (t: TestContext) => Promise<RateLimitStore>;

async function accepted(
  store: RateLimitStore,
  key: string,
  limits: RateLimits,
  seconds: number,
): Promise<boolean> {
  return (await store.consume(key, limits, at(seconds))).allowed;
}

const redis = testRedisUrl();

/** Each store kind, made fresh per test and closed when the test ends. */
const STORES: Array<{ name: string; skip: string | null; make: MakeStore }> = [
  {
    name: 'MemoryRateLimitStore',
    skip: null,
    make: async (t) => {
      const store = new MemoryRateLimitStore();
      t.after(() => store.close());
      return store;
    },
  },
  {
    name: 'RedisRateLimitStore',
    skip: redis.skip,
    make: async (t) => {
      const url = redis.url as string;
      const log = recordingLog();
      const store = new RedisRateLimitStore({ url, keyPrefix: useRedisPrefix(t, url), log });
      t.after(async () => {
        await store.close();
        // Every answer must have come from Redis, not from the per-instance fallback.
        assert.deepEqual(log.lines, []);
      });
      await store.connect(5000);
      return store;
    },
  },
];

for (const kind of STORES) {
  if (kind.skip) {
    it(`${kind.name} conformance`, { skip: kind.skip }, () => {});
    continue;
  }
  const make = kind.make;
  describe(`${kind.name} conformance`, () => {
    it('accepts exactly perMinute requests out of many parallel ones', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 7, perHour: 3000 };
        const decisions = await Promise.all(
          Array.from({ length: 50 }, () => store.consume('k', limits, at(0))),
        );
        assert.equal(decisions.filter((d) => d.allowed).length, 7);
        assert.equal(decisions.filter((d) => !d.allowed).length, 43);
        assert.deepEqual(
          decisions.filter((d) => d.allowed).map((d) => d.windows[0].remaining),
          [6, 5, 4, 3, 2, 1, 0],
        );
      }));

    it('does not count refused requests against either window', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 3, perHour: 100 };
        for (let i = 0; i < 3; i += 1) assert.ok(await accepted(store, 'k', limits, i));
        for (let i = 0; i < 20; i += 1) {
          const d = await store.consume('k', limits, at(10 + i));
          assert.equal(d.allowed, false);
          assert.equal(d.windows[1].remaining, 97);
        }
        // Once the first three have rolled out, exactly perMinute more get through.
        const later = await Promise.all(
          Array.from({ length: 10 }, () => store.consume('k', limits, at(62))),
        );
        assert.equal(later.filter((d) => d.allowed).length, 3);
        const last = later.findLast((d) => d.allowed);
        assert.equal(last?.windows[1].remaining, 94);
      }));

    it('peeks at the windows without counting anything', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 3, perHour: 100 };
        /** Whether a request would be accepted, and each window's [remaining, reset seconds]. */
        const peekAt = async (seconds: number) => {
          const { allowed, windows } = await store.peek('k', limits, at(seconds));
          return { allowed, windows: windows.map((w) => [w.remaining, w.resetSeconds]) };
        };
        assert.deepEqual(await peekAt(0), {
          allowed: true,
          windows: [
            [3, 0],
            [100, 0],
          ],
        });
        assert.ok(await accepted(store, 'k', limits, 0));
        assert.ok(await accepted(store, 'k', limits, 10));
        for (let i = 0; i < 5; i += 1) {
          assert.deepEqual(await peekAt(20), {
            allowed: true,
            windows: [
              [1, 40],
              [98, 3580],
            ],
          });
        }
        // The peeks took no slot: the third request is accepted, the fourth refused.
        assert.ok(await accepted(store, 'k', limits, 20));
        const full = await store.peek('k', limits, at(25));
        assert.equal(full.allowed, false);
        assert.equal(full.retryAfterSeconds, 35);
        assert.equal(full.windows[0].remaining, 0);
        assert.equal(await accepted(store, 'k', limits, 25), false);
      }));

    it('uses rolling windows, not fixed ones', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 2, perHour: 3000 };
        assert.ok(await accepted(store, 'k', limits, 0));
        assert.ok(await accepted(store, 'k', limits, 30));
        assert.equal(await accepted(store, 'k', limits, 59), false);
        assert.equal(await accepted(store, 'k', limits, 59.999), false);
        // The t=0 request leaves the window at exactly t=60.
        assert.ok(await accepted(store, 'k', limits, 60));
        assert.equal(await accepted(store, 'k', limits, 61), false);
        assert.equal(await accepted(store, 'k', limits, 89.999), false);
        assert.ok(await accepted(store, 'k', limits, 90));
      }));

    it('reports a retryAfter after which the request is accepted, and not a second sooner', async (t) => {
      // Each case fills the windows at the given times, then probes at `probe`.
      const cases: Array<{ limits: RateLimits; fill: number[]; probe: number; retry: number }> = [
        { limits: { perMinute: 3, perHour: 100 }, fill: [0, 10, 20], probe: 25.5, retry: 35 },
        { limits: { perMinute: 3, perHour: 100 }, fill: [0, 10, 20], probe: 25, retry: 35 },
        { limits: { perMinute: 1, perHour: 100 }, fill: [0], probe: 59.9995, retry: 1 },
        { limits: { perMinute: 10, perHour: 3 }, fill: [0, 100, 200], probe: 1000, retry: 2600 },
        // Both windows full: the hour one, which frees later, decides.
        { limits: { perMinute: 2, perHour: 3 }, fill: [0, 3000, 3010], probe: 3020, retry: 580 },
        // Both full, the minute one freeing later.
        { limits: { perMinute: 2, perHour: 3 }, fill: [0, 3570, 3590], probe: 3595, retry: 35 },
      ];
      const store = await make(t);
      for (const [i, c] of cases.entries()) {
        const key = `case-${i}`;
        for (const s of c.fill) assert.ok(await accepted(store, key, c.limits, s), `case ${i}`);
        const refused = await store.consume(key, c.limits, at(c.probe));
        assert.equal(refused.allowed, false, `case ${i}`);
        assert.equal(refused.retryAfterSeconds, c.retry, `case ${i}`);
        const early = c.probe + c.retry - 1;
        assert.equal(await accepted(store, key, c.limits, early), false, `case ${i} early`);
        assert.ok(await accepted(store, key, c.limits, c.probe + c.retry), `case ${i} on time`);
      }
    });

    it('reports retryAfter as null when accepted and at least 1 when refused', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 1, perHour: 10 };
        const ok = await store.consume('k', limits, at(0));
        assert.equal(ok.retryAfterSeconds, null);
        const refused = await store.consume('k', limits, at(59.9999));
        assert.equal(refused.retryAfterSeconds, 1);
      }));

    it('waits for enough old entries to expire when a key holds more than its new limit', (t) =>
      make(t).then(async (store) => {
        for (let i = 0; i < 5; i += 1) {
          assert.ok(await accepted(store, 'k', { perMinute: 5, perHour: 100 }, i));
        }
        const lowered = { perMinute: 2, perHour: 100 };
        const refused = await store.consume('k', lowered, at(10));
        assert.equal(refused.allowed, false);
        assert.equal(refused.windows[0].remaining, 0);
        // Entries at 0, 1, 2 and 3 must leave; the one at 3 does so at t=63.
        assert.equal(refused.retryAfterSeconds, 53);
        assert.equal(await accepted(store, 'k', lowered, 62.5), false);
        assert.ok(await accepted(store, 'k', lowered, 63));
      }));

    it('refuses on the hour window when the minute window still has room', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 5, perHour: 8 };
        for (const t of [0, 1, 2, 3, 4, 60, 61, 62])
          assert.ok(await accepted(store, 'k', limits, t));
        const d = await store.consume('k', limits, at(600));
        assert.equal(d.allowed, false);
        assert.deepEqual(d.windows, [
          { name: 'minute', limit: 5, windowSeconds: 60, remaining: 5, resetSeconds: 0 },
          { name: 'hour', limit: 8, windowSeconds: 3600, remaining: 0, resetSeconds: 3000 },
        ]);
        assert.equal(d.retryAfterSeconds, 3000);
        assert.equal(await accepted(store, 'k', limits, 3599), false);
        assert.ok(await accepted(store, 'k', limits, 3600));
      }));

    it('reports remaining and reset per window after each request', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 120, perHour: 3000 };
        const first = await store.consume('k', limits, at(0));
        assert.deepEqual(first, {
          allowed: true,
          windows: [
            { name: 'minute', limit: 120, windowSeconds: 60, remaining: 119, resetSeconds: 60 },
            { name: 'hour', limit: 3000, windowSeconds: 3600, remaining: 2999, resetSeconds: 3600 },
          ],
          retryAfterSeconds: null,
        });
        const second = await store.consume('k', limits, at(37));
        assert.deepEqual(
          second.windows.map((w) => [w.remaining, w.resetSeconds]),
          [
            [118, 23],
            [2998, 3563],
          ],
        );
        // Reset rounds up: 36.5 s left is reported as 37.
        const third = await store.consume('k', limits, at(60.5));
        assert.deepEqual(
          third.windows.map((w) => [w.remaining, w.resetSeconds]),
          [
            [118, 37],
            [2997, 3540],
          ],
        );
        const fourth = await store.consume('k', limits, at(61));
        assert.equal(fourth.windows[0].resetSeconds, 36);
        assert.equal(fourth.windows[1].resetSeconds, 3539);
      }));

    it('keeps keys independent', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 2, perHour: 10 };
        assert.ok(await accepted(store, 'a', limits, 0));
        assert.ok(await accepted(store, 'a', limits, 0));
        assert.equal(await accepted(store, 'a', limits, 1), false);
        const b = await store.consume('b', limits, at(1));
        assert.equal(b.allowed, true);
        assert.equal(b.windows[0].remaining, 1);
        assert.equal(b.windows[1].remaining, 9);
      }));

    it('applies each key its own limits', (t) =>
      make(t).then(async (store) => {
        const small = { perMinute: 1, perHour: 5 };
        const large = { perMinute: 4, perHour: 5 };
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            i % 2 === 0
              ? store.consume('small', small, at(0))
              : store.consume('large', large, at(0)),
          ),
        );
        const count = (parity: number): number =>
          results.filter((d, i) => i % 2 === parity && d.allowed).length;
        assert.equal(count(0), 1);
        assert.equal(count(1), 4);
      }));

    it('handles a key at its full hourly quota', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 3000, perHour: 3000 };
        for (let i = 0; i < 3000; i += 1) {
          assert.ok((await store.consume('k', limits, T0 + i)).allowed);
        }
        const refused = await store.consume('k', limits, at(10));
        assert.equal(refused.allowed, false);
        assert.equal(refused.retryAfterSeconds, 3590);
        // Entries leave one by one as the hour rolls past each millisecond.
        assert.ok((await store.consume('k', limits, at(3600))).allowed);
        assert.equal((await store.consume('k', limits, at(3600))).allowed, false);
        assert.ok((await store.consume('k', limits, at(3600) + 1)).allowed);
      }));

    it('prunes expired entries of a key when it is used again', (t) =>
      make(t).then(async (store) => {
        const limits = { perMinute: 5, perHour: 5 };
        for (let i = 0; i < 5; i += 1) assert.ok(await accepted(store, 'k', limits, i));
        const d = await store.consume('k', limits, at(3604));
        assert.equal(d.allowed, true);
        assert.equal(d.windows[1].remaining, 4);
        assert.equal(d.windows[1].resetSeconds, 3600);
      }));

    it('rejects limits that are not positive integers', (t) =>
      make(t).then(async (store) => {
        for (const limits of [
          { perMinute: 0, perHour: 10 },
          { perMinute: 5, perHour: -1 },
          { perMinute: 1.5, perHour: 10 },
          { perMinute: Number.NaN, perHour: 10 },
        ]) {
          await assert.rejects(store.consume('k', limits, at(0)), RangeError);
        }
      }));
  });
}

async function withMemoryStore(fn: (store: MemoryRateLimitStore) => Promise<void>): Promise<void> {
  const store = new MemoryRateLimitStore();
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

describe('MemoryRateLimitStore', () => {
  it('forgets a key after an hour without traffic', () =>
    withMemoryStore(async (store) => {
      const limits = { perMinute: 5, perHour: 10 };
      assert.ok(await accepted(store, 'a', limits, 0));
      assert.ok(await accepted(store, 'b', limits, 1800));
      store.sweep(at(3599.999));
      assert.equal(store.size(), 2);
      store.sweep(at(3600));
      assert.equal(store.size(), 1);
      store.sweep(at(5400));
      assert.equal(store.size(), 0);
    }));

  it('does not keep state for a refused request of an idle key', () =>
    withMemoryStore(async (store) => {
      const limits = { perMinute: 1, perHour: 1 };
      assert.ok(await accepted(store, 'k', limits, 0));
      assert.equal(await accepted(store, 'k', limits, 1), false);
      store.sweep(at(3600));
      assert.equal(store.size(), 0);
    }));

  it('sweeps idle keys periodically', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const store = new MemoryRateLimitStore({ sweepIntervalMs: 1000 });
    try {
      const limits = { perMinute: 5, perHour: 10 };
      // The periodic sweep reads the real clock, so place these relative to it.
      await store.consume('old', limits, Date.now() - 3_600_001);
      await store.consume('fresh', limits, Date.now());
      assert.equal(store.size(), 2);
      t.mock.timers.tick(1000);
      assert.equal(store.size(), 1);
    } finally {
      await store.close();
    }
  });
});

describe('rateLimitHeaders', () => {
  const decision = (
    allowed: boolean,
    minute: [number, number],
    hour: [number, number],
    retryAfterSeconds: number | null = null,
  ): RateLimitDecision => ({
    allowed,
    windows: [
      {
        name: 'minute',
        limit: 120,
        windowSeconds: 60,
        remaining: minute[0],
        resetSeconds: minute[1],
      },
      { name: 'hour', limit: 3000, windowSeconds: 3600, remaining: hour[0], resetSeconds: hour[1] },
    ],
    retryAfterSeconds,
  });

  it('describes both windows and the minute one in the legacy headers', () => {
    assert.deepEqual(rateLimitHeaders(decision(true, [57, 23], [2940, 1800])), {
      'RateLimit-Policy': '"minute";q=120;w=60, "hour";q=3000;w=3600',
      RateLimit: '"minute";r=57;t=23, "hour";r=2940;t=1800',
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': '57',
      'X-RateLimit-Reset': '23',
    });
  });

  it('adds Retry-After on refusal', () => {
    assert.deepEqual(rateLimitHeaders(decision(false, [0, 14], [2880, 1800], 14)), {
      'RateLimit-Policy': '"minute";q=120;w=60, "hour";q=3000;w=3600',
      RateLimit: '"minute";r=0;t=14, "hour";r=2880;t=1800',
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '14',
      'Retry-After': '14',
    });
  });

  it('uses the hour window in the legacy headers when it binds first', () => {
    assert.deepEqual(rateLimitHeaders(decision(false, [120, 0], [0, 1234], 1234)), {
      'RateLimit-Policy': '"minute";q=120;w=60, "hour";q=3000;w=3600',
      RateLimit: '"minute";r=120;t=0, "hour";r=0;t=1234',
      'X-RateLimit-Limit': '3000',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1234',
      'Retry-After': '1234',
    });
    const close = rateLimitHeaders(decision(true, [12, 40], [11, 2000]));
    assert.equal(close['X-RateLimit-Limit'], '3000');
    assert.equal(close['X-RateLimit-Remaining'], '11');
    assert.equal(close['X-RateLimit-Reset'], '2000');
  });

  it('on a tie, describes the window that frees a slot later: it refuses longer', () => {
    const headers = rateLimitHeaders(decision(true, [5, 40], [5, 2000]));
    assert.equal(headers['X-RateLimit-Limit'], '3000');
    assert.equal(headers['X-RateLimit-Reset'], '2000');
    // Both spent: the hour refuses until its slot frees, as Retry-After says.
    const spent = rateLimitHeaders(decision(false, [0, 60], [0, 3538], 3538));
    assert.equal(spent['X-RateLimit-Limit'], '3000');
    assert.equal(spent['X-RateLimit-Reset'], '3538');
    assert.equal(spent['Retry-After'], '3538');
    // The minute's slot frees later (an hour window of one's own): the minute binds.
    const later = rateLimitHeaders(decision(true, [0, 50], [0, 20]));
    assert.equal(later['X-RateLimit-Limit'], '120');
    assert.equal(later['X-RateLimit-Reset'], '50');
  });

  it('formats a decision from the store', () =>
    withMemoryStore(async (store) => {
      const limits = { perMinute: 2, perHour: 50 };
      await store.consume('k', limits, at(0));
      await store.consume('k', limits, at(20));
      const headers = rateLimitHeaders(await store.consume('k', limits, at(45)));
      assert.deepEqual(headers, {
        'RateLimit-Policy': '"minute";q=2;w=60, "hour";q=50;w=3600',
        RateLimit: '"minute";r=0;t=15, "hour";r=48;t=3555',
        'X-RateLimit-Limit': '2',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '15',
        'Retry-After': '15',
      });
    }));
});
