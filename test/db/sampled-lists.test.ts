import assert from 'node:assert/strict';
import { it } from 'node:test';
import { monthOf, monthStart } from '../../src/db/sampled-lists.ts';

it('a month is read from a stored date or timestamp, digit by digit, and back to its first day', () => {
  assert.equal(monthOf('0000-01-01'), 0);
  assert.equal(monthOf('0001-01-31'), 12);
  assert.equal(monthOf('2024-02-29'), 2024 * 12 + 1);
  assert.equal(monthOf('2025-12-31T23:59:59.999Z'), 2025 * 12 + 11);
  assert.equal(monthOf('9999-12-31'), 9999 * 12 + 11);
  for (const date of ['0000-01-01', '1970-10-01', '2024-02-01', '9999-12-01']) {
    assert.equal(monthStart(monthOf(date)), date);
  }
});
