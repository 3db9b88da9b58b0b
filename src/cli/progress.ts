import type { ImportProgress } from '../import/importer.ts';
import type { CommitStep } from '../import/transaction.ts';

/**
 * `cdapi import`'s progress, on stderr (stdout keeps the summary): on a terminal one line
 * redrawn in place at most every 100 ms, with a bar; otherwise a plain line every `everyMs`
 * (JSON lines with --json), the first after one period, so a long job's log shows it is alive
 * and a quick one prints nothing but its result.
 * Rate and ETA come from the share of the file read: records differ in size, bytes do not.
 * Once the file is read, the commit's steps (`CommitStep`) follow: each is said as it starts,
 * and said again while it runs (see TICK_MS), since a large first load spends longer on them
 * than on reading. A long import ends with a line of its whole time and rate.
 */
export interface ProgressOptions {
  file: string;
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  json: boolean;
  /** Plain lines: at most one per this many milliseconds (0: one per chunk read). */
  everyMs: number;
}

const REDRAW_MS = 100;
/**
 * How often a commit step that runs on is said again: a terminal's line every second, so its
 * clock moves; plain lines every period, but not more than once a second (`--progress-every
 * 0.001` asks for a line per 64 KiB read, not a thousand lines a second of one step).
 */
const TICK_MS = 1000;
const BAR_WIDTH = 16;

/** 65 → `1:05`, 3725 → `1:02:05`. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const mm = String(Math.floor(s / 60) % 60).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm}:${ss}` : `${Math.floor(s / 60)}:${ss}`;
}

const number = (n: number) => Math.round(n).toLocaleString('en-US');

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

/** A commit step as the progress line says it. */
function stepText(step: CommitStep): string {
  switch (step.name) {
    case 'indexes':
      return `building the indexes of ${step.table}`;
    case 'search':
      return `building the search index of ${step.table}`;
    case 'feed':
      return 'recording the change feed';
    case 'samples':
      return 'sampling the long lists';
    case 'summaries':
      return 'counting for totals and searches';
    case 'commit':
      return 'committing';
    case 'checkpoint':
      return 'writing to disk';
    case 'statistics':
      return "refreshing the query planner's statistics";
  }
}

type Stage = 'reading' | 'committing' | 'done';

export class ImportProgressReporter {
  private readonly started = performance.now();
  private readonly tty: boolean;
  /** On a terminal the first frame is drawn at once; plain lines wait a period first. */
  private lastWrite: number;
  private latest: ImportProgress = { bytesRead: 0, totalBytes: 0, records: 0 };
  private readAll = false;
  private readSeconds = 0;
  private written = false;
  private step: CommitStep | null = null;
  private ticker: NodeJS.Timeout | null = null;

  private readonly options: ProgressOptions;

  constructor(options: ProgressOptions) {
    this.options = options;
    this.tty = options.out.isTTY === true && !options.json;
    this.lastWrite = this.tty || options.everyMs === 0 ? Number.NEGATIVE_INFINITY : this.started;
  }

  /** For `importFile`'s `onProgress`. */
  readonly update = (progress: ImportProgress): void => {
    const now = performance.now();
    if (progress.bytesRead >= progress.totalBytes) {
      // Read to the end: said once (a last line without a line break still adds its record),
      // and by plain lines only when they said something before or the period has passed: a
      // quick import prints nothing but its result.
      const changed = !this.readAll || progress.records !== this.latest.records;
      this.latest = progress;
      this.readAll = true;
      this.readSeconds = this.seconds(now);
      if (changed && (this.tty || this.written || this.due(now))) this.write('committing', now);
    } else {
      this.latest = progress;
      if (this.due(now)) this.write('reading', now);
    }
  };

  /** For `importFile`'s `onStep`. */
  readonly startStep = (step: CommitStep): void => {
    this.step = step;
    const now = performance.now();
    if (this.tty || this.written || this.due(now)) this.write('committing', now);
    const { everyMs } = this.options;
    const period = this.tty ? TICK_MS : everyMs > 0 ? Math.max(everyMs, TICK_MS) : 0;
    if (!this.ticker && period > 0) {
      this.ticker = setInterval(() => {
        const at = performance.now();
        if (this.due(at)) this.write('committing', at);
      }, period);
      this.ticker.unref();
    }
  };

  /** The import committed: a long one (one that printed progress) ends with its whole time. */
  done(): void {
    this.stopTicking();
    if (this.written || this.options.everyMs === 0) this.write('done', performance.now());
  }

  /** Ends the redrawn line on a terminal, so what follows starts on a line of its own. */
  end(): void {
    this.stopTicking();
    if (this.tty && this.written) this.options.out.write('\n');
  }

  private stopTicking(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  private seconds(now: number): number {
    return (now - this.started) / 1000;
  }

  private due(now: number): boolean {
    return now - this.lastWrite >= (this.tty ? REDRAW_MS : this.options.everyMs);
  }

  /** What the import is doing, as the line says it after the percent. */
  private doing(stage: Stage, step: CommitStep | null, seconds: number, eta: number | null) {
    if (stage === 'done') return `done in ${clock(seconds)}`;
    if (step) return `${stepText(step)}… ${clock(seconds)}`;
    if (stage === 'committing') return `read in ${clock(this.readSeconds)}, committing…`;
    return `ETA ${eta === null ? '?' : clock(eta)}`;
  }

  private write(stage: Stage, now: number): void {
    this.lastWrite = now;
    this.written = true;
    const progress = this.latest;
    const seconds = this.seconds(now);
    const share = progress.totalBytes > 0 ? progress.bytesRead / progress.totalBytes : 1;
    // While reading, and at the end of it, the rate of reading; once done, the whole import's.
    const rateSeconds = stage === 'committing' ? this.readSeconds : seconds;
    const rate = rateSeconds > 0 ? progress.records / rateSeconds : 0;
    // Unknown in the first second: start-up would make it wild.
    const eta = share > 0 && seconds >= 1 ? (seconds * (1 - share)) / share : null;
    const step = stage === 'committing' ? this.step : null;
    const { out, json, file } = this.options;
    if (json) {
      const figures = {
        file,
        records: progress.records,
        bytes_read: progress.bytesRead,
        total_bytes: progress.totalBytes,
        percent: Math.floor(share * 1000) / 10,
        records_per_second: Math.round(rate),
        eta_seconds: stage === 'reading' ? (eta === null ? null : Math.round(eta)) : 0,
        elapsed_seconds: Math.round(seconds * 1000) / 1000,
        stage,
        ...(step && { step: step.name }),
        ...(step && 'table' in step && { table: step.table }),
      };
      out.write(`${JSON.stringify({ progress: figures })}\n`);
      return;
    }
    const percent = `${Math.floor(share * 100)}%`;
    const records = `${number(progress.records)} records`;
    const speed = `${number(rate)} records/s`;
    const doing = this.doing(stage, step, seconds, eta);
    if (this.tty) {
      const filled = Math.round(share * BAR_WIDTH);
      const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
      // What matters most first: a narrow terminal cuts the end.
      const line = `import ${bar} ${percent.padStart(4)}  ${doing}  ${records}  ${speed}`;
      // Cut to the terminal's width: a wrapped line could not be redrawn in place.
      out.write(`\r${line.slice(0, (out.columns || 80) - 1)}\x1b[K`);
      return;
    }
    if (step) {
      out.write(`cdapi import: ${stepText(step)}, ${clock(seconds)} elapsed\n`);
      return;
    }
    const size = `${percent} of ${megabytes(progress.totalBytes)}`;
    out.write(`cdapi import: ${size}, ${records}, ${speed}, ${doing}\n`);
  }
}
