import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoginFailures } from '../../src/admin/login-failures.ts';

describe('failed admin logins', () => {
  it('hold an address back after `limit` failures in the window, until the oldest leaves it', () => {
    let now = 1_000_000;
    const failures = new LoginFailures(3, 60_000, () => now);
    for (let i = 0; i < 3; i += 1) {
      assert.equal(failures.retryAfterSeconds('a'), 0);
      failures.record('a');
      now += 10_000;
    }
    // Failures at 0 s, 10 s and 20 s; now is 30 s: the first leaves the window at 60 s.
    assert.equal(failures.retryAfterSeconds('a'), 30);
    assert.equal(failures.retryAfterSeconds('b'), 0, 'another address is not held back');
    now += 29_000;
    assert.equal(failures.retryAfterSeconds('a'), 1);
    now += 1_000;
    assert.equal(failures.retryAfterSeconds('a'), 0, 'one slot freed at 60 s');
    failures.record('a');
    // Failures at 10, 20 and 60 s: the next slot frees at 70 s.
    assert.equal(failures.retryAfterSeconds('a'), 10);
  });
});
