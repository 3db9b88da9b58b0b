import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runOnThread, THREAD_IDLE_MS, type ThreadJobOptions } from '../src/threads.ts';
import { useTempDir } from './helpers/databases.ts';
import type { PooledThreadJob } from './helpers/pooled-thread.ts';

const THREAD_MODULE = 'helpers/pooled-thread';
const run = <T>(job: PooledThreadJob, options?: ThreadJobOptions) =>
  runOnThread<T>(import.meta.url, THREAD_MODULE, job, options);

// Imports run their writer, samples and checkpoint on threads that earlier jobs left idle
// (src/threads.ts): each job must get its own messages and its own end, whatever the jobs
// before it did.
describe('jobs on pooled threads', () => {
  it('run one after another on the same thread, and at the same time on two', async () => {
    const first = await run<number>({ op: 'id' }).result;
    assert.equal(await run<number>({ op: 'id' }).result, first);
    const [a, b] = await Promise.all([
      run<number>({ op: 'id' }).result,
      run<number>({ op: 'id' }).result,
    ]);
    assert.notEqual(a, b);
    assert.ok([a, b].includes(first));
  });

  it('hear only their own messages, every one before their end', async () => {
    const heard: unknown[] = [];
    const posting = run<number>({ op: 'post', count: 200 }, { onMessage: (m) => heard.push(m) });
    const thread = await posting.result;
    assert.deepEqual(
      heard,
      Array.from({ length: 200 }, (_, i) => i),
    );
    const later: unknown[] = [];
    const echo = run<string>({ op: 'echo' }, { onMessage: (m) => later.push(m) });
    echo.post('for the second job');
    assert.equal(await echo.result, 'for the second job');
    assert.deepEqual(later, []);
    assert.equal(await run<number>({ op: 'id' }).result, thread);
  });

  it('end with their error and its code, and the thread takes the next job', async () => {
    const thread = await run<number>({ op: 'id' }).result;
    await assert.rejects(run({ op: 'fail' }).result, {
      message: 'refused by the job',
      code: 'E_REFUSED',
    });
    assert.equal(await run<number>({ op: 'id' }).result, thread);
  });

  it('fail when their thread stops, and the next job gets a new thread', async () => {
    const thread = await run<number>({ op: 'id' }).result;
    await assert.rejects(run({ op: 'stop' }).result, /stopped \(exit code 3\)/);
    assert.notEqual(await run<number>({ op: 'id' }).result, thread);
  });

  // Given one, the job would wait for ever: it fails its test instead.
  it('are not given a thread that stopped while idle', { timeout: 30_000 }, async () => {
    const thread = await run<number>({ op: 'stop-after' }).result;
    // It stops 10 ms after its job; by then the pool has heard of it.
    await sleep(1000);
    assert.notEqual(await run<number>({ op: 'id' }).result, thread);
  });

  it('run on threads of their own heap limits', async () => {
    const plain = await run<number>({ op: 'id' }).result;
    const limits = { maxOldGenerationSizeMb: 64 };
    const limited = await run<number>({ op: 'id' }, { resourceLimits: limits }).result;
    assert.notEqual(limited, plain);
    assert.equal(await run<number>({ op: 'id' }, { resourceLimits: limits }).result, limited);
    assert.equal(await run<number>({ op: 'id' }).result, plain);
  });

  it('leave a thread idle only for a while', async () => {
    const thread = await run<number>({ op: 'id' }).result;
    await sleep(THREAD_IDLE_MS + 1000);
    assert.notEqual(await run<number>({ op: 'id' }).result, thread);
  });

  it('leave no idle thread that keeps a process alive', (t) => {
    const threads = new URL('../src/threads.ts', import.meta.url).href;
    // Held by anything, the process would live until the thread's idle time is over; the
    // timer (which holds nothing itself) says so halfway.
    const script = `
      import { runOnThread } from ${JSON.stringify(threads)};
      const id = await runOnThread(${JSON.stringify(import.meta.url)}, ${JSON.stringify(THREAD_MODULE)}, { op: 'id' }).result;
      console.log('ran on thread', id);
      setTimeout(() => process.exit(2), ${THREAD_IDLE_MS / 2}).unref();`;
    const file = join(useTempDir(t), 'one-job.mjs');
    writeFileSync(file, script);
    const child = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    assert.equal(child.status, 0, `held after its job (${child.status}): ${child.stderr}`);
    assert.match(child.stdout, /^ran on thread \d+$/m);
  });
});
