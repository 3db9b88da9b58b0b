import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseCache } from '../../src/http/response-cache.ts';

/** An answer made twice, as the cache keeps it (see the last test). */
function keep(cache: ResponseCache, key: string, json: string): void {
  cache.set(key, json);
  cache.set(key, json);
}

describe('the response cache', () => {
  it('keeps each answer in memory of its own, not in a slice of a shared pool', () => {
    const cache = new ResponseCache(1024 * 1024);
    const json = JSON.stringify({ id: 1, merchant: 'Kırtasiye Güler' });
    keep(cache, '1:1:/expenses/1', json);
    const body = cache.get('1:1:/expenses/1');
    assert.equal(body?.toString(), json);
    // A slice of Node's 8 KB pool would keep the whole slab alive for as long as it is kept.
    assert.equal(body?.buffer.byteLength, Buffer.byteLength(json));
  });

  it('keeps a copy of an answer given as bytes (as the ETag hook hands it on), not the buffer itself', () => {
    const cache = new ResponseCache(1024 * 1024);
    const json = JSON.stringify({ id: 2, merchant: 'Kırtasiye Güler' });
    // A small Buffer.from is a slice of the shared pool, which the cache must not keep.
    const given = Buffer.from(json);
    cache.set('1:1:/expenses/2', given);
    cache.set('1:1:/expenses/2', given);
    given.fill(0);
    const body = cache.get('1:1:/expenses/2');
    assert.equal(body?.toString(), json);
    assert.equal(body?.buffer.byteLength, given.length);
  });

  it('drops the least recently used answers to stay within its budget', () => {
    const body = 'x'.repeat(100);
    const keys = Array.from({ length: 9 }, (_, i) => `k${i}`);
    // Eight answers fill it; one answer may take an eighth of it.
    const cache = new ResponseCache(8 * (2 * 'k0'.length + body.length));
    for (const key of keys.slice(0, 8)) keep(cache, key, body);
    assert.ok(cache.get('k0'));
    keep(cache, 'k8', body);
    assert.equal(cache.get('k1'), undefined);
    for (const key of keys.filter((key) => key !== 'k1')) assert.ok(cache.get(key), key);
  });

  it('does not keep an answer larger than an eighth of its budget', () => {
    const cache = new ResponseCache(800);
    keep(cache, 'big', 'x'.repeat(100));
    assert.equal(cache.get('big'), undefined);
    keep(cache, 'small', 'x'.repeat(90));
    assert.ok(cache.get('small'));
  });

  it('keeps an answer the second time it is made, so answers asked for once do not push out the others', () => {
    const cache = new ResponseCache(1024 * 1024);
    cache.set('1:1:/leaves?page=1', '{"data":[]}');
    assert.equal(cache.get('1:1:/leaves?page=1'), undefined);
    assert.equal(cache.bytes, 0);
    cache.set('1:1:/leaves?page=1', '{"data":[]}');
    assert.equal(cache.get('1:1:/leaves?page=1')?.toString(), '{"data":[]}');
    // A key made once is remembered for two generations of 4,096 other keys, then forgotten.
    cache.set('1:1:/leaves?page=2', '{"data":[]}');
    for (let i = 0; i < 4096; i += 1) cache.set(`1:1:/expenses/${i}`, '{}');
    cache.set('1:1:/leaves?page=2', '{"data":[]}');
    assert.ok(cache.get('1:1:/leaves?page=2'), 'still remembered a generation later');
    cache.set('1:1:/leaves?page=3', '{"data":[]}');
    for (let i = 0; i < 2 * 4096; i += 1) cache.set(`1:2:/expenses/${i}`, '{}');
    cache.set('1:1:/leaves?page=3', '{"data":[]}');
    assert.equal(cache.get('1:1:/leaves?page=3'), undefined, 'forgotten two generations later');
  });
});
