import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CompanyData } from '../../bench/soak/catalog.ts';
import {
  type IntervalFigures,
  intervalCount,
  median,
  rssDrift,
  slope,
  warmupIntervalCount,
} from '../../bench/soak/intervals.ts';
import { type CallKind, createMix, type MixCompany } from '../../bench/soak/mix.ts';
import { parseSoakOptions } from '../../bench/soak/options.ts';
import { formatInterval, formatSummary, intervalHeader, judge } from '../../bench/soak/report.ts';

const MB = 2 ** 20;

function interval(number: number, warmup: boolean, rssMedianMb: number): IntervalFigures {
  return {
    number,
    startSeconds: (number - 1) * 30,
    endSeconds: number * 30,
    warmup,
    requests: 6000,
    errors: 0,
    latencyMs: { p50: 1, p99: 10, max: 20 },
    rssMedianBytes: rssMedianMb * MB,
    rssMaxBytes: rssMedianMb * MB,
    maxSendLagMs: 0,
  };
}

describe('the soak RSS drift', () => {
  it('compares the last interval median with the first one after warm-up', () => {
    const intervals = [
      interval(1, true, 100), // warm-up growth does not count
      interval(2, true, 150),
      interval(3, false, 200),
      interval(4, false, 260),
      interval(5, false, 210),
    ];
    const drift = rssDrift(intervals, []);
    assert.equal(drift?.baselineBytes, 200 * MB);
    assert.equal(drift?.finalBytes, 210 * MB);
    assert.equal(drift?.percent, 5);
    assert.equal(drift?.fittedPercent, null);
  });

  it('fits a line through the samples after warm-up for the trend', () => {
    const intervals = [interval(1, true, 50), interval(2, false, 100), interval(3, false, 110)];
    // 100 MB at 30 s growing 1 MB every 3 s: +20 MB over the 60 s window.
    const samples = [0, 15, 30, 45, 60, 75, 90].map((seconds) => ({
      seconds,
      bytes: (seconds < 30 ? 50 : 100 + (seconds - 30) / 3) * MB,
    }));
    const drift = rssDrift(intervals, samples);
    assert.ok(drift?.fittedPercent !== null && drift !== null);
    assert.ok(Math.abs((drift.fittedPercent as number) - 20) < 1e-9);
  });

  it('is unknown without two intervals after warm-up', () => {
    assert.equal(rssDrift([interval(1, true, 100), interval(2, false, 100)], []), null);
  });

  it('fails the check on any error or on 10 % growth, not on shrinking', () => {
    const drift = (percent: number) => ({
      baselineBytes: 1,
      finalBytes: 1,
      percent,
      fittedPercent: null,
    });
    assert.deepEqual(judge(0, drift(9.99), 10), { passed: true, reasons: [] });
    assert.deepEqual(judge(0, drift(-25), 10), { passed: true, reasons: [] });
    assert.equal(judge(0, drift(10), 10).passed, false);
    assert.equal(judge(1, drift(0), 10).passed, false);
    assert.equal(judge(0, null, 10).passed, false);
  });

  it('takes medians and slopes', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([]), null);
    assert.equal(
      slope([
        { x: 0, y: 1 },
        { x: 2, y: 5 },
      ]),
      2,
    );
    assert.equal(
      slope([
        { x: 1, y: 1 },
        { x: 1, y: 5 },
      ]),
      null,
    );
  });

  it('reports RSS in MiB, the unit the kernel counts it in, in the intervals and the summary', () => {
    assert.match(intervalHeader(), /RSS MiB median {2}RSS MiB max$/);
    assert.match(formatInterval(interval(3, false, 200)), / 200 +200$/);
    const intervals = [interval(1, true, 150), interval(2, false, 200), interval(3, false, 210)];
    const drift = rssDrift(intervals, []);
    const summary = formatSummary({
      intervals,
      kinds: [],
      failures: new Map(),
      slowest: [],
      drift,
      maxDriftPercent: 10,
      peakRssBytes: 215 * MB,
      verdict: judge(0, drift, 10),
    });
    assert.match(
      summary,
      /RSS drift after warm-up: 200 MiB \(median, first interval after warm-up\) → 210 MiB \(median, last interval\) = \+5\.00 % .*; peak 215 MiB\n/,
    );
  });
});

describe('npm run soak options', () => {
  it('defaults to 10 minutes at 50 calls/s, 30 s intervals, a minute of warm-up', () => {
    const options = parseSoakOptions([], {});
    assert.ok(options !== null);
    assert.equal(options.durationSeconds, 600);
    assert.equal(options.rate, 50);
    assert.equal(options.intervalSeconds, 30);
    assert.equal(options.warmupSeconds, 60);
    assert.equal(options.engine, 'sqlite');
    assert.equal(options.data, 'bench-data/small.ndjson');
    assert.equal(options.postgresUrl, 'postgres://postgres@127.0.0.1:5432/cdapi_bench');
    assert.equal(intervalCount(options), 20);
    assert.equal(warmupIntervalCount(options), 2);
  });

  it('scales the interval and warm-up to short runs', () => {
    const options = parseSoakOptions(['--minutes', '0.5'], {});
    assert.equal(options?.intervalSeconds, 3);
    assert.equal(options?.warmupSeconds, 6);
  });

  it('takes flags and the bench PostgreSQL URL', () => {
    const options = parseSoakOptions(
      ['--engine', 'postgres', '--rate', '75', '--interval', '10', '--warmup-minutes', '0.5'],
      { BENCH_DATABASE_URL: 'postgres://u@h/db' },
    );
    assert.equal(options?.postgresUrl, 'postgres://u@h/db');
    assert.equal(options?.rate, 75);
    assert.equal(options?.intervalSeconds, 10);
    assert.equal(options?.warmupSeconds, 30);
  });

  it('refuses bad values and runs too short to measure a drift', () => {
    for (const argv of [
      ['--minutes', '0'],
      ['--rate', '1.5'],
      ['--engine', 'mysql'],
      ['--minutes', '1', '--interval', '30'],
      ['--unknown'],
    ]) {
      assert.throws(() => parseSoakOptions(argv, {}), /usage: npm run soak/, argv.join(' '));
    }
  });
});

describe('the soak request mix', () => {
  const data = (id: number, receipts: number[]): CompanyData => ({
    id,
    employees: { min: id * 100, max: id * 100 + 49 },
    employeeCount: 50,
    leaves: { ids: [id * 1000 + 1, id * 1000 + 7] },
    leaveCount: 2,
    expenses: { min: id * 1000, max: id * 1000 + 499 },
    expenseCount: 500,
    leaveTypeIds: [id * 10 + 1, id * 10 + 2],
    categoryIds: [id * 10 + 3],
    surnames: ['Yılmaz', 'Müller'],
    merchants: ['Migros', 'Café de Flore'],
    firstDate: '2020-01-01',
    lastDate: '2025-12-31',
    lastUpdatedAt: '2025-12-31T15:00:00Z',
    receiptExpenseIds: receipts,
  });
  const companies: MixCompany[] = [
    { data: data(1, []), benchPaths: [['/me'], ['/expenses/5', '/expenses/6']] },
    { data: data(2, []), benchPaths: [] },
    { data: data(3, [3001]), benchPaths: [] },
  ];
  const calls = (seed: number) => {
    const next = createMix(companies, 1, seed);
    return Array.from({ length: 3000 }, next);
  };

  it('gives the same calls for the same seed, and others for another', () => {
    assert.deepEqual(calls(7), calls(7));
    assert.notDeepEqual(calls(7).slice(0, 50), calls(8).slice(0, 50));
  });

  it('sends half the calls with the large company key and every kind somewhere', () => {
    const sent = calls(1);
    const large = sent.filter((call) => call.companyId === 1).length;
    assert.ok(large > 1350 && large < 1650, String(large));
    const kinds = new Set<CallKind>(sent.map((call) => call.kind));
    assert.equal(kinds.size, 12);
  });

  it('asks for receipts only where there are some, and records that exist', () => {
    for (const call of calls(2)) {
      const [path = '', query = ''] = call.path.split('?');
      if (call.kind.startsWith('receipt')) {
        assert.equal(call.companyId, 3);
        assert.match(path, /^\/expenses\/3001\/receipt$/);
        assert.equal(call.expectedStatus, 302);
      } else {
        assert.equal(call.expectedStatus, 200);
      }
      if (call.kind === 'bench-url') assert.equal(call.companyId, 1);
      if (call.kind === 'leave') {
        assert.ok([1, 7].includes(Number(path.split('/')[2]) - call.companyId * 1000));
      }
      const params = new URLSearchParams(query);
      const from = params.get('from');
      const to = params.get('to');
      if (from !== null && to !== null) {
        // A calendar month, quarter or year of the company's years.
        assert.match(`${from} ${to}`, /^202[0-5]-\d\d-01 202[0-5]-\d\d-(28|29|30|31)$/);
        assert.ok(from < to, call.path);
      }
      // Incremental syncs ask for the last month's changes, not for years of them.
      const since = params.get('updated_since');
      if (since !== null) assert.ok(since >= '2025-12-01' && since < '2025-12-31', since);
      // Category and leave type filters come with a period.
      if (params.has('category_id') || params.has('leave_type_id')) assert.ok(from !== null);
    }
  });
});
