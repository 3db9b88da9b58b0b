import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/keys/api-key.ts';
import { parseScopes } from '../../src/keys/scopes.ts';

describe('API keys', () => {
  it('look like cdk_ + 32 random base62 characters + a 6-character checksum', () => {
    const { key, prefix, hash } = generateApiKey();
    assert.match(key, /^cdk_[0-9A-Za-z]{38}$/);
    assert.equal(prefix, key.slice(0, 12));
    assert.equal(hash, createHash('sha256').update(key).digest('hex'));
    assert.equal(hashApiKey(key), hash);
    assert.ok(isWellFormedApiKey(key));
  });

  it('carry at least 160 bits of randomness: no repeats, every character used', () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey().key);
    assert.equal(new Set(keys).size, keys.length);
    const used = new Set(keys.flatMap((k) => [...k.slice(4, 36)]));
    assert.equal(used.size, 62);
    // 32 characters of 62 possibilities: log2(62) * 32 ≈ 190 bits.
    assert.ok(Math.log2(62) * 32 >= 160);
  });

  it('fail the checksum when any character changes', () => {
    const { key } = generateApiKey();
    for (let i = 4; i < key.length; i += 1) {
      const swapped = key[i] === 'a' ? 'b' : 'a';
      assert.equal(
        isWellFormedApiKey(key.slice(0, i) + swapped + key.slice(i + 1)),
        false,
        `position ${i}`,
      );
    }
    assert.equal(isWellFormedApiKey(key.slice(0, -1)), false);
    assert.equal(isWellFormedApiKey(`xdk_${key.slice(4)}`), false);
  });
});

describe('scopes', () => {
  it('parses a comma-separated list and rejects unknown scopes', () => {
    assert.deepEqual(parseScopes('leaves.read, expenses.read,leaves.read'), [
      'leaves.read',
      'expenses.read',
    ]);
    assert.throws(() => parseScopes('leaves.read,salaries.read'), /unknown scope "salaries.read"/);
  });
});
