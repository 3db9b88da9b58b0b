import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DerivedCache } from '../../src/db/derived-cache.ts';

/** A stand-in for a Kysely query: what `DerivedCache` reads of one is its compiled form. */
const query = (sql: string, ...parameters: unknown[]) => ({
  compile: () => ({ sql, parameters }),
});

/** A cache whose values count the computations, so a test sees which calls computed. */
function countingCache(maxEntries?: number) {
  const cache = new DerivedCache<number>(maxEntries);
  let computed = 0;
  const value = (companyId: number, version: number, q: ReturnType<typeof query>) =>
    cache.value(companyId, version, q, async () => ++computed);
  return { value, computed: () => computed };
}

test('the same query of the same company at the same version is computed once', async () => {
  const { value, computed } = countingCache();
  const first = await value(1, 7, query('select count(*) from leaves where company_id = ?', 1));
  const again = await value(1, 7, query('select count(*) from leaves where company_id = ?', 1));
  assert.equal(first, 1);
  assert.equal(again, 1);
  assert.equal(computed(), 1);
});

test('another company, version, statement or parameter is computed afresh', async () => {
  const { value, computed } = countingCache();
  const sql = 'select count(*) from leaves where company_id = ? and status = ?';
  await value(1, 7, query(sql, 1, 'pending'));
  assert.equal(await value(2, 7, query(sql, 1, 'pending')), 2, 'another company');
  assert.equal(await value(1, 8, query(sql, 1, 'pending')), 3, 'another data version');
  assert.equal(await value(1, 7, query(`${sql} and id > 0`, 1, 'pending')), 4, 'another statement');
  assert.equal(await value(1, 7, query(sql, 1, 'approved')), 5, 'another parameter');
  assert.equal(await value(1, 7, query(sql, 1, 'pending')), 1, 'the first one, still cached');
  assert.equal(computed(), 5);
});

test('a statement and its parameters are told apart wherever the text splits', async () => {
  // Keys join the statement and the parameters: no split of the same characters may collide.
  const { value, computed } = countingCache();
  await value(1, 1, query('select ?', 'a\u0000["b"]'));
  await value(1, 1, query('select ?\u0000["a"]', 'b'));
  await value(1, 1, query('select ?', 'a', 'b'));
  await value(1, 1, query('select ?', ['a', 'b']));
  assert.equal(computed(), 4);
});

test('the least recently used entry goes first when the cache is full', async () => {
  const { value, computed } = countingCache(2);
  await value(1, 1, query('a'));
  await value(1, 1, query('b'));
  await value(1, 1, query('a')); // a is now the most recently used
  await value(1, 1, query('c')); // b goes
  assert.equal(computed(), 3);
  assert.equal(await value(1, 1, query('a')), 1);
  assert.equal(await value(1, 1, query('b')), 4);
});

test('a failed computation is not remembered', async () => {
  const cache = new DerivedCache<number>();
  const q = query('select count(*) from expenses');
  await assert.rejects(
    cache.value(1, 1, q, async () => {
      throw new Error('database down');
    }),
  );
  assert.equal(await cache.value(1, 1, q, async () => 42), 42);
});
