import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatPace, measurePace } from '../../bench/harness/pace.ts';

describe('the machine’s pace a benchmark run reports', () => {
  it('times both parts of the reference work, in whole milliseconds', () => {
    const pace = measurePace(0.02);
    for (const ms of [pace.javascriptMs, pace.sqliteMs]) {
      assert.ok(Number.isInteger(ms) && ms >= 0, `${ms} ms`);
    }
    assert.equal(
      formatPace({ javascriptMs: 481, sqliteMs: 1085 }),
      'machine pace (bench/harness/pace.ts, lower is faster): JavaScript 481 ms, SQLite 1085 ms',
    );
  });
});
