import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ColdPhase, ColdRun } from '../../bench/harness/cold.ts';
import type { MixClass } from '../../bench/harness/cold-mix.ts';
import type { ClassFigures } from '../../bench/harness/mix-load.ts';
import type { PeerRun } from '../../bench/harness/peer.ts';
import type { EngineRun } from '../../bench/harness/report.ts';
import { formatTargets, judgeTargets } from '../../bench/harness/targets.ts';

const figures = (p99: number, statusCodes: Record<string, number> = { '200': 100 }) =>
  ({
    requests: 100,
    latencyMs: { mean: p99 / 3, p50: p99 / 4, p90: p99 / 2, p99, max: p99 * 1.5 },
    statusCodes,
    timeouts: 0,
    errors: 0,
    slowest: [],
  }) satisfies ClassFigures;

interface PhaseShape {
  cache?: 'on' | 'off';
  connections?: number;
  p99s: Partial<Record<MixClass, number>>;
  requestsPerSecond?: number;
  max?: number;
  statusCodes?: Record<string, number>;
  timeouts?: number;
  probeP99?: number;
  rssMb?: number;
}

const phase = (shape: PhaseShape): ColdPhase => ({
  cache: shape.cache ?? 'off',
  connections: shape.connections ?? 8,
  durationSeconds: 30,
  requests: 9000,
  requestsPerSecond: shape.requestsPerSecond ?? 400,
  repeated: 0,
  latencyMs: { mean: 20, p50: 15, p90: 50, p99: 80, max: shape.max ?? 250 },
  statusCodes: shape.statusCodes ?? { '200': 9000 },
  timeouts: shape.timeouts ?? 0,
  errors: 0,
  slowest: [],
  byClass: Object.fromEntries(
    Object.entries(shape.p99s).map(([name, p99]) => [name, figures(p99 as number)]),
  ),
  probe: figures(shape.probeP99 ?? 12),
  servicePeakRssBytes: (shape.rssMb ?? 250) * 2 ** 20,
  cpu: null,
});

const cold = (phases: ColdPhase[], worstFirstMs = 40): ColdRun => ({
  mix: { requests: 20000, seed: 1, smallCompanies: 20, byClass: {} },
  phases,
  firstRequests: {
    requests: [{ class: 'window', path: '/leaves', status: 200, ms: worstFirstMs }],
    medianMs: 10,
    worstMs: worstFirstMs,
    probe: figures(5),
    servicePeakRssBytes: 200 * 2 ** 20,
  },
});

const run = (engine: EngineRun['engine'], coldRun: ColdRun, extra: Partial<EngineRun> = {}) =>
  ({
    engine,
    database: engine,
    import: { status: 'reused', reason: 'database newer than the data' },
    cold: coldRun,
    ...extra,
  }) satisfies EngineRun;

const verdictOf = (runs: EngineRun[], target: RegExp, engine: EngineRun['engine']) => {
  const row = judgeTargets(runs).find((r) => target.test(r.target));
  assert.ok(row, `no target matching ${target}`);
  return row.verdicts[engine];
};

describe("issue 17's targets judged from a run", () => {
  it('holds the 1–2-letter searches to 300 ms and every other class to 100', () => {
    const lite = run(
      'sqlite',
      cold([phase({ p99s: { 'short-search': 250, 'dated-short-search': 290, window: 90 } })]),
    );
    assert.deepEqual(verdictOf([lite], /every class/, 'sqlite'), {
      met: true,
      detail: 'closest dated-short-search 290.0 of 300',
    });
    const slow = run(
      'sqlite',
      cold([
        phase({ p99s: { 'short-search': 310, window: 106.4, search: 90 } }),
        phase({ p99s: { 'short-search': 200, window: 99, search: 90 } }),
      ]),
    );
    assert.deepEqual(verdictOf([slow], /every class/, 'sqlite'), {
      met: false,
      detail: 'window 106.4 of 100, short-search 310.0 of 300 (in 1 of 2 phases)',
    });
  });

  it('judges only the phases at 8 connections with the cache off, and says when there is none', () => {
    const onlyCacheOn = run('sqlite', cold([phase({ cache: 'on', p99s: { window: 150 } })]));
    assert.equal(verdictOf([onlyCacheOn], /every class/, 'sqlite')?.met, null);
    assert.equal(verdictOf([onlyCacheOn], /req\/s at 8/, 'sqlite')?.met, null);
    const mixed = run(
      'sqlite',
      cold([
        phase({ cache: 'on', p99s: { window: 150 }, requestsPerSecond: 100 }),
        phase({ p99s: { window: 60 }, requestsPerSecond: 310 }),
      ]),
    );
    assert.equal(verdictOf([mixed], /every class/, 'sqlite')?.met, true);
    const noClass = run('sqlite', cold([phase({ p99s: {} })]));
    assert.equal(verdictOf([noClass], /every class/, 'sqlite')?.met, null);
    assert.deepEqual(verdictOf([mixed], /req\/s at 8/, 'sqlite'), {
      met: true,
      detail: '310 req/s',
    });
  });

  it('compares PostgreSQL with SQLite class by class and in req/s, only when both ran', () => {
    const lite = run(
      'sqlite',
      cold([phase({ p99s: { window: 40, reference: 10 }, requestsPerSecond: 500 })]),
    );
    const pg = (reference: number, requestsPerSecond: number) =>
      run('postgres', cold([phase({ p99s: { window: 60, reference }, requestsPerSecond })]));
    assert.deepEqual(verdictOf([lite, pg(19, 260)], /within 2/, 'postgres'), {
      met: true,
      detail: 'p99 1.50–1.90 ×, req/s 0.52 ×',
    });
    assert.equal(verdictOf([lite, pg(25, 260)], /within 2/, 'postgres')?.met, false);
    assert.equal(verdictOf([lite, pg(19, 240)], /within 2/, 'postgres')?.met, false);
    assert.equal(verdictOf([pg(19, 260)], /within 2/, 'postgres')?.met, null);
    assert.ok(!judgeTargets([lite]).some((row) => /within 2/.test(row.target)));
  });

  it('at 32 connections, misses a request over 2 s and any answer but 200 and 503', () => {
    const at32 = (shape: Partial<PhaseShape>) =>
      run('sqlite', cold([phase({ connections: 32, p99s: { window: 150 }, ...shape })]));
    assert.deepEqual(
      verdictOf([at32({ statusCodes: { '200': 900, '503': 3 } })], /32 connections/, 'sqlite'),
      {
        met: true,
        detail: 'slowest 250.0 ms, 503×3',
      },
    );
    assert.equal(verdictOf([at32({ max: 2100 })], /32 connections/, 'sqlite')?.met, false);
    assert.deepEqual(
      verdictOf([at32({ statusCodes: { '200': 900, '500': 1 } })], /32 connections/, 'sqlite'),
      {
        met: false,
        detail: 'slowest 250.0 ms, 503×0, 500×1',
      },
    );
    const twoAt32AndOneAt8 = run(
      'sqlite',
      cold([
        phase({ connections: 32, p99s: {}, statusCodes: { '200': 900, '503': 2, '500': 1 } }),
        phase({ connections: 32, p99s: {}, statusCodes: { '200': 900, '503': 1 }, timeouts: 2 }),
        phase({ connections: 8, p99s: {}, statusCodes: { '200': 900, '500': 5 } }),
      ]),
    );
    assert.deepEqual(verdictOf([twoAt32AndOneAt8], /32 connections/, 'sqlite'), {
      met: false,
      detail: 'slowest 250.0 ms, 503×3, 500×1 timeout×2',
    });
  });

  it('misses /me over 20 ms in any phase, a slow first request, an RSS over 300 MB', () => {
    const r = run(
      'postgres',
      cold(
        [
          phase({ p99s: { window: 50 } }),
          phase({ connections: 32, p99s: {}, probeP99: 20.8, rssMb: 310 }),
        ],
        301,
      ),
    );
    assert.deepEqual(verdictOf([r], /\/me/, 'postgres'), {
      met: false,
      detail: '20.8 (cache off, 32 conn.)',
    });
    assert.deepEqual(verdictOf([r], /first request/, 'postgres'), {
      met: false,
      detail: 'worst 301.0 ms',
    });
    assert.deepEqual(verdictOf([r], /RSS/, 'postgres'), {
      met: false,
      detail: 'peak 310 MiB = 325.1 million bytes',
    });
  });

  it('counts RSS in MiB, as the kernel does, and gives the peak in millions of bytes too', () => {
    const r = run('sqlite', cold([phase({ p99s: { window: 50 }, rssMb: 290 })]));
    assert.deepEqual(verdictOf([r], /RSS/, 'sqlite'), {
      met: true,
      detail: 'peak 290 MiB = 304.1 million bytes',
    });
  });

  it('judges the import only when the run timed one, on SQLite', () => {
    const reused = run('sqlite', cold([]));
    assert.deepEqual(verdictOf([reused], /import/, 'sqlite'), {
      met: null,
      detail: 'not timed: database newer than the data',
    });
    const imported = (seconds: number) =>
      run('sqlite', cold([]), {
        import: {
          status: 'imported',
          records: 2_552_515,
          seconds,
          recordsPerSecond: 2_552_515 / seconds,
          peakRssBytes: null,
          rssSource: 'n/a',
          steps: [],
        },
      });
    assert.deepEqual(verdictOf([imported(56.35)], /import/, 'sqlite'), {
      met: false,
      detail: '45,298 records/s (56.35 s)',
    });
    assert.equal(verdictOf([imported(49.13)], /import/, 'sqlite')?.met, true);
  });

  it('holds the service to 3 × Platformatic DB in every class of the peer part', () => {
    const side = {
      durationSeconds: 15,
      requests: 1,
      requestsPerSecond: 1,
      repeated: 0,
      latencyMs: figures(1).latencyMs,
      statusCodes: {},
      timeouts: 0,
      errors: 0,
      cpu: null,
    };
    const comparison = (name: MixClass | 'all', ratio: number) => ({
      class: name,
      requests: 100,
      left: 0,
      first: 'service' as const,
      service: side,
      peer: side,
      ratio,
    });
    const peer = (ratios: [MixClass | 'all', number][]): PeerRun => ({
      peer: { package: '@platformatic/db', version: '3', node: '24', poolSize: 2 },
      durationSeconds: 15,
      notComparable: [],
      checks: [],
      phases: [
        { connections: 8, comparisons: ratios.map(([name, ratio]) => comparison(name, ratio)) },
      ],
    });
    const r = (ratios: [MixClass | 'all', number][]) =>
      run('postgres', cold([]), { peer: peer(ratios) });
    assert.deepEqual(
      verdictOf(
        [
          r([
            ['by-id', 1],
            ['employees', 2.79],
            ['all', 9],
          ]),
        ],
        /Platformatic/,
        'postgres',
      ),
      {
        met: false,
        detail: 'by-id 1.00 ×, employees 2.79 ×',
      },
    );
    assert.equal(
      verdictOf(
        [
          r([
            ['deep-page', 70],
            ['all', 9],
          ]),
        ],
        /Platformatic/,
        'postgres',
      )?.met,
      true,
    );
    assert.equal(verdictOf([run('postgres', cold([]))], /Platformatic/, 'postgres')?.met, null);
  });

  it('prints each database’s verdicts under its name', () => {
    const lite = run('sqlite', cold([phase({ p99s: { window: 120 } })]));
    const text = formatTargets(judgeTargets([lite]), ['sqlite']);
    assert.match(
      text,
      /^Issue 17's targets, as this run measured them\nSQLite\n {2}MISSED {8}every class's p99 at 8 connections, cache off, ≤ 100 ms \(1–2 letters ≤ 300\) — window 120\.0 of 100 \(in 1 of 1 phases\)\n/,
    );
    assert.match(
      text,
      /\n {2}not measured {2}import ≥ 50,000 records\/s \(whole process\) — not timed: /,
    );
  });
});
