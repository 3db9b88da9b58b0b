import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ColdPhase, type ColdRun, formatCold } from '../../bench/harness/cold.ts';
import { type ClassFigures, Tally } from '../../bench/harness/mix-load.ts';
import { mebibytes } from '../../bench/harness/processes.ts';

const latency = { mean: 20, p50: 18, p90: 40, p99: 90, max: 120 };
const figures = (requests: number): ClassFigures => ({
  requests,
  latencyMs: latency,
  statusCodes: { '200': requests },
  timeouts: 0,
  errors: 0,
  slowest: [],
});

const phase = (cpu: ColdPhase['cpu']): ColdPhase => ({
  cache: 'off',
  connections: 8,
  durationSeconds: 30,
  requests: 6000,
  requestsPerSecond: 200,
  repeated: 0,
  latencyMs: latency,
  statusCodes: { '200': 6000 },
  timeouts: 0,
  errors: 0,
  slowest: [],
  byClass: { window: figures(6000) },
  probe: figures(600),
  servicePeakRssBytes: 180 * 2 ** 20,
  cpu,
});

const run = (cpu: ColdPhase['cpu']): ColdRun => ({
  mix: { requests: 20000, seed: 1, smallCompanies: 20, byClass: { window: 20000 } },
  phases: [phase(cpu)],
  firstRequests: {
    requests: [{ class: 'window', path: '/leaves?from=2020-01-01', status: 200, ms: 50 }],
    medianMs: 50,
    worstMs: 50,
    probe: figures(10),
    servicePeakRssBytes: null,
  },
});

const cpu = { serverUs: 2412, postgresUs: 3906, generatorUs: 310, ceiling: 950 };

describe('the cold mix report', () => {
  it('tells each phase’s CPU a request, PostgreSQL’s only where the service reads it', () => {
    assert.match(
      formatCold('PostgreSQL', run(cpu), true),
      /\nCPU a request \(the \/me probe's counted too\): service 2\.41 ms, PostgreSQL 3\.91 ms, load generator 0\.31 ms\n/,
    );
    const sqlite = formatCold('SQLite', run(cpu), false);
    assert.match(sqlite, /: service 2\.41 ms, load generator 0\.31 ms\n/);
    assert.doesNotMatch(sqlite, /PostgreSQL \d/);
  });

  it('gives each phase’s peak RSS in MiB, as the kernel counts it and the verdict judges it', () => {
    assert.match(
      formatCold('SQLite', run(cpu), false),
      /\n\s*response cache off, 8 connections, 30 s: 200 req\/s, service peak RSS 180 MiB\n/,
    );
    assert.equal(mebibytes(299.6 * 2 ** 20), '300 MiB');
    assert.equal(mebibytes(null), 'n/a');
  });

  it('tells when each of the slowest requests was sent, so a new process’s first burst shows', () => {
    const tally = new Tally();
    tally.record({ status: 200, ms: 12 }, '/leaves?page=2', 14.2);
    tally.record({ status: 200, ms: 301.26 }, '/leaves?search=Özdemi', 0.004);
    tally.record({ status: 503, ms: 40 }, '/expenses', 29.5);
    const { slowest } = tally.figures();
    assert.deepEqual(slowest, [
      { path: '/leaves?search=Özdemi', status: 200, ms: 301.3, atSeconds: 0 },
      { path: '/expenses', status: 503, ms: 40, atSeconds: 29.5 },
      { path: '/leaves?page=2', status: 200, ms: 12, atSeconds: 14.2 },
    ]);
    const report = formatCold(
      'SQLite',
      { ...run(null), phases: [{ ...phase(null), slowest }] },
      false,
    );
    assert.match(
      report,
      /\n {2}301\.3 ms 200 at 0\.0 s \/leaves\?search=Özdemi\n {2}40\.0 ms 503 at 29\.5 s /,
    );
  });

  it('leaves the line out where /proc could not be read', () => {
    assert.doesNotMatch(formatCold('SQLite', run(null), false), /CPU a request/);
  });
});
