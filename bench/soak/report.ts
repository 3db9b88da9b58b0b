import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { table } from '../../src/cli/context.ts';
import { mebibytes, wholeMebibytes } from '../harness/processes.ts';
import {
  type Drift,
  type IntervalFigures,
  type LatencyFigures,
  latencyFigures,
  recordLatency,
} from './intervals.ts';
import type { CallKind } from './mix.ts';

const SLOWEST_KEPT = 10;

export interface KindFigures {
  kind: CallKind;
  calls: number;
  errors: number;
  latencyMs: LatencyFigures;
}

/** Whole-run figures per kind of call, and what went wrong, for the summary. */
export class KindRecorder {
  private readonly kinds = new Map<CallKind, { errors: number; latencyUs: RecordableHistogram }>();
  /** `kind: failure` → count. */
  readonly failures = new Map<string, number>();
  /** The first few failed calls, to reproduce them. */
  readonly examples: {
    kind: CallKind;
    companyId: number;
    path: string;
    failure: string;
    atSeconds: number;
  }[] = [];
  /** The slowest calls of the run, slowest first. */
  readonly slowest: { kind: CallKind; companyId: number; path: string; latencyMs: number }[] = [];

  record(
    call: { kind: CallKind; companyId: number; path: string },
    latencyMs: number,
    failure: string | null,
    atSeconds: number,
  ): void {
    let entry = this.kinds.get(call.kind);
    if (entry === undefined) {
      entry = { errors: 0, latencyUs: createHistogram() };
      this.kinds.set(call.kind, entry);
    }
    recordLatency(entry.latencyUs, latencyMs);
    this.keepIfSlow(call, latencyMs);
    if (failure === null) return;
    entry.errors++;
    const reason = `${call.kind}: ${failure}`;
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
    if (this.examples.length < 10) {
      const { kind, companyId, path } = call;
      this.examples.push({ kind, companyId, path, failure, atSeconds });
    }
  }

  private keepIfSlow(call: { kind: CallKind; companyId: number; path: string }, latencyMs: number) {
    const { slowest } = this;
    if (slowest.length === SLOWEST_KEPT && latencyMs <= (slowest.at(-1)?.latencyMs ?? 0)) return;
    const { kind, companyId, path } = call;
    slowest.push({ kind, companyId, path, latencyMs });
    slowest.sort((a, b) => b.latencyMs - a.latencyMs);
    if (slowest.length > SLOWEST_KEPT) slowest.pop();
  }

  figures(): KindFigures[] {
    return [...this.kinds].map(([kind, { errors, latencyUs }]) => ({
      kind,
      calls: latencyUs.count,
      errors,
      latencyMs: latencyFigures(latencyUs),
    }));
  }
}

/** A table cell in whole MiB, the unit its column names. */
const mib = (bytes: number | null) => (bytes === null ? 'n/a' : String(wholeMebibytes(bytes)));
const ms = (value: number | undefined) => (value === undefined ? 'n/a' : value.toFixed(1));
const clock = (seconds: number) =>
  `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
const signedPercent = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(2)} %`;

const COLUMNS: [title: string, width: number][] = [
  ['elapsed', 7],
  ['requests', 8],
  ['req/s', 6],
  ['errors', 6],
  ['p50 ms', 7],
  ['p99 ms', 7],
  ['max ms', 8],
  ['RSS MiB median', 14],
  ['RSS MiB max', 11],
];

function row(cells: string[]): string {
  return cells.map((cell, i) => cell.padStart(COLUMNS[i]?.[1] ?? 0)).join('  ');
}

/** The header of the interval lines. */
export function intervalHeader(): string {
  return row(COLUMNS.map(([title]) => title));
}

/** One line per interval, printed as the interval ends (so not aligned by `table`). */
export function formatInterval(figures: IntervalFigures): string {
  const seconds = figures.endSeconds - figures.startSeconds;
  const line = row([
    clock(figures.endSeconds),
    String(figures.requests),
    (figures.requests / seconds).toFixed(0),
    String(figures.errors),
    ms(figures.latencyMs?.p50),
    ms(figures.latencyMs?.p99),
    ms(figures.latencyMs?.max),
    mib(figures.rssMedianBytes),
    mib(figures.rssMaxBytes),
  ]);
  return figures.warmup ? `${line}  warm-up` : line;
}

export interface Verdict {
  passed: boolean;
  reasons: string[];
}

export function judge(errors: number, drift: Drift | null, maxDriftPercent: number): Verdict {
  const reasons: string[] = [];
  if (errors > 0) reasons.push(`${errors} failed calls`);
  if (drift === null) reasons.push('no RSS figures to compute the drift from');
  else if (drift.percent >= maxDriftPercent) {
    reasons.push(`RSS drift ${signedPercent(drift.percent)} ≥ ${maxDriftPercent} %`);
  }
  return { passed: reasons.length === 0, reasons };
}

export interface Summary {
  intervals: IntervalFigures[];
  kinds: KindFigures[];
  failures: Map<string, number>;
  slowest: KindRecorder['slowest'];
  drift: Drift | null;
  maxDriftPercent: number;
  peakRssBytes: number | null;
  verdict: Verdict;
}

export function formatSummary(summary: Summary): string {
  const { intervals, drift } = summary;
  const calls = intervals.reduce((sum, interval) => sum + interval.requests, 0);
  const errors = intervals.reduce((sum, interval) => sum + interval.errors, 0);
  const p99Range = (warmup: boolean) => {
    const p99s = intervals.flatMap((interval) =>
      interval.warmup !== warmup || interval.latencyMs === null ? [] : [interval.latencyMs.p99],
    );
    return p99s.length === 0 ? 'n/a' : `${ms(Math.min(...p99s))}–${ms(Math.max(...p99s))} ms`;
  };
  const lines = [
    `calls: ${calls}, errors: ${errors}`,
    `p99 per interval: ${p99Range(false)} after warm-up (${p99Range(true)} during it)`,
    drift === null
      ? 'RSS drift: n/a'
      : `RSS drift after warm-up: ${mebibytes(drift.baselineBytes)} (median, first interval after ` +
        `warm-up) → ${mebibytes(drift.finalBytes)} (median, last interval) = ` +
        `${signedPercent(drift.percent)} (limit < ${summary.maxDriftPercent} %); fitted trend ` +
        `${drift.fittedPercent === null ? 'n/a' : signedPercent(drift.fittedPercent)}; ` +
        `peak ${mebibytes(summary.peakRssBytes)}`,
    '',
    table(
      ['call', 'calls', 'errors', 'p50 ms', 'p99 ms', 'max ms'],
      summary.kinds.map((kind) => [
        kind.kind,
        kind.calls,
        kind.errors,
        ms(kind.latencyMs.p50),
        ms(kind.latencyMs.p99),
        ms(kind.latencyMs.max),
      ]),
    ),
  ];
  lines.push('', 'slowest calls:');
  for (const call of summary.slowest.slice(0, 5)) {
    lines.push(`  ${ms(call.latencyMs)} ms  company ${call.companyId}  ${call.path}`);
  }
  if (summary.failures.size > 0) {
    lines.push('', 'failures:');
    for (const [reason, count] of summary.failures) lines.push(`  ${count} × ${reason}`);
  }
  const { verdict } = summary;
  lines.push('', verdict.passed ? 'PASS' : `FAIL: ${verdict.reasons.join('; ')}`);
  return lines.join('\n');
}
