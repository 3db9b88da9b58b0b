import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseCache } from '../../src/http/response-cache.ts';

describe('the response cache', () => {
  it('keeps each answer in memory of its own, not in a slice of a shared pool', () => {
    const cache = new ResponseCache(1024 * 1024);
    const json = JSON.stringify({ id: 1, merchant: 'Kırtasiye Güler' });
    cache.set('1:1:/expenses/1', json);
    const body = cache.get('1:1:/expenses/1');
    assert.equal(body?.toString(), json);
    // A slice of Node's 8 KB pool would keep the whole slab alive for as long as it is kept.
    assert.equal(body?.buffer.byteLength, Buffer.byteLength(json));
  });

  it('drops the least recently used answers to stay within its budget', () => {
    const body = 'x'.repeat(100);
    const keys = Array.from({ length: 9 }, (_, i) => `k${i}`);
    // Eight answers fill it; one answer may take an eighth of it.
    const cache = new ResponseCache(8 * (2 * 'k0'.length + body.length));
    for (const key of keys.slice(0, 8)) cache.set(key, body);
    assert.ok(cache.get('k0'));
    cache.set('k8', body);
    assert.equal(cache.get('k1'), undefined);
    for (const key of keys.filter((key) => key !== 'k1')) assert.ok(cache.get(key), key);
  });

  it('does not keep an answer larger than an eighth of its budget', () => {
    const cache = new ResponseCache(800);
    cache.set('big', 'x'.repeat(100));
    assert.equal(cache.get('big'), undefined);
    cache.set('small', 'x'.repeat(90));
    assert.ok(cache.get('small'));
  });
});
