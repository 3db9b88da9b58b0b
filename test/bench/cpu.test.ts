import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { type CpuTimes, cpuPerRequest, cpuTimes } from '../../bench/harness/cpu.ts';

const times = (
  server: Record<number, number>,
  postgres: Record<number, number>,
  generator: number,
): CpuTimes => ({
  server: new Map(Object.entries(server).map(([pid, ms]) => [Number(pid), ms])),
  postgres: new Map(Object.entries(postgres).map(([pid, ms]) => [Number(pid), ms])),
  generator,
});

describe('CPU per request of a benchmark run', () => {
  it('divides what each party spent by the requests, counting processes started meanwhile', () => {
    const before = times({ 1: 100 }, { 10: 50, 11: 20 }, 5);
    // Backend 11 exited (what it spent is gone), 12 started: 30 ms of it count.
    const after = times({ 1: 300, 2: 50 }, { 10: 150, 12: 30 }, 25);
    const cost = cpuPerRequest(before, after, 100);
    assert.deepEqual(cost, {
      serverUs: 2500,
      postgresUs: 1300,
      generatorUs: 200,
      ceiling: (availableParallelism() * 1_000_000) / 1500,
    });
  });

  it('is null without both readings or without requests', () => {
    const reading = times({ 1: 1 }, {}, 1);
    assert.equal(cpuPerRequest(null, reading, 10), null);
    assert.equal(cpuPerRequest(reading, null, 10), null);
    assert.equal(cpuPerRequest(reading, reading, 0), null);
  });

  it('reads the server’s child processes and the load generator from /proc', {
    skip: process.platform !== 'linux' && 'reads /proc (Linux only)',
  }, async () => {
    // A child that spends 300 ms of CPU (its own count, however busy the machine), then waits
    // to be killed.
    const child = spawn(process.execPath, [
      '-e',
      'const spent = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };' +
        'while (spent() < 300); console.log("done"); setInterval(() => {}, 1000);',
    ]);
    try {
      await once(child.stdout, 'data');
      const reading = cpuTimes(process.pid) as CpuTimes;
      assert.ok((reading.server.get(child.pid as number) ?? 0) >= 250, 'the child’s CPU is read');
      assert.ok(reading.server.has(process.pid));
      assert.ok(reading.generator > 0);
    } finally {
      child.kill();
    }
  });
});
