import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stopPretenuring } from '../src/heap.ts';

describe('stopPretenuring', () => {
  it('leaves a pretenuring flag the operator gave to node as it is', () => {
    for (const given of [
      '--allocation-site-pretenuring',
      '--no-allocation-site-pretenuring',
      '--allocation_site_pretenuring',
    ]) {
      assert.equal(stopPretenuring(['--enable-source-maps', given]), false, given);
    }
  });

  it('turns pretenuring off otherwise', () => {
    assert.equal(stopPretenuring(['--enable-source-maps', '--max-semi-space-size=4']), true);
  });
});
