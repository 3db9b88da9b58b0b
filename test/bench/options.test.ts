import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { isAlive } from '../../bench/harness/interrupt.ts';
import { benchPostgresUrl, parseOptions } from '../../bench/harness/options.ts';
import { eventually } from '../helpers/eventually.ts';

describe('npm run bench options', () => {
  it('tells a bad value by the variable it came from, or by the flag when both are given', () => {
    assert.throws(
      () => parseOptions([], { BENCH_DURATION: '-1' }),
      /^Error: BENCH_DURATION must be a positive integer/,
    );
    assert.throws(
      () => parseOptions(['--duration', '0'], { BENCH_DURATION: '5' }),
      /^Error: --duration must be a positive integer/,
    );
    assert.throws(
      () => parseOptions([], { BENCH_CONNECTIONS: 'many' }),
      /^Error: BENCH_CONNECTIONS must be a positive integer/,
    );
    assert.throws(
      () => parseOptions([], { BENCH_DB: 'mysql' }),
      /^Error: BENCH_DB must be sqlite, postgres or both/,
    );
    assert.throws(() => parseOptions([], { BENCH_PARTS: 'cold,nap' }), /^Error: BENCH_PARTS/);
  });

  it('refuses a BENCH_DATABASE_URL that is no postgres:// URL or names no database', () => {
    for (const [url, problem] of [
      ['not a url', /BENCH_DATABASE_URL must be a postgres:\/\/ URL/],
      ['mysql://root@127.0.0.1/db', /BENCH_DATABASE_URL must be a postgres:\/\/ URL/],
      ['postgres://postgres@127.0.0.1:5432/', /BENCH_DATABASE_URL must name its database/],
      ['postgres://postgres@127.0.0.1:5432', /BENCH_DATABASE_URL must name its database/],
    ] as const) {
      assert.throws(() => benchPostgresUrl({ BENCH_DATABASE_URL: url }), problem, url);
    }
    assert.equal(
      benchPostgresUrl({ BENCH_DATABASE_URL: 'postgresql://u@h/bench' }),
      'postgresql://u@h/bench',
    );
    assert.equal(benchPostgresUrl({}), 'postgres://postgres@127.0.0.1:5432/cdapi_bench');
  });
});

describe('a benchmark stopped by a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the service it started (${signal} to the harness alone)`, async () => {
      const harness = spawn(
        process.execPath,
        ['--import', 'tsx', new URL('fixtures/harness-with-service.ts', import.meta.url).pathname],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const [line] = await once(createInterface({ input: harness.stdout }), 'line');
      const servicePid = Number(line);
      assert.ok(Number.isSafeInteger(servicePid) && servicePid > 0, line);
      assert.ok(isAlive(servicePid));
      harness.kill(signal);
      const [code] = await once(harness, 'exit');
      assert.equal(code, signal === 'SIGTERM' ? 143 : 130);
      await eventually(async () => !isAlive(servicePid), `process ${servicePid} stopped`);
    });
  }
});
