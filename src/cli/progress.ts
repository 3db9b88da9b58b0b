import type { ImportProgress } from '../import/importer.ts';

/**
 * `cdapi import`'s progress, on stderr (stdout keeps the summary): on a terminal one line
 * redrawn in place at most every 100 ms, with a bar; otherwise a plain line every `everyMs`
 * (JSON lines with --json), the first after one period, so a long job's log shows it is alive
 * and a quick one prints nothing but its result.
 * Rate and ETA come from the share of the file read: records differ in size, bytes do not.
 */
export interface ProgressOptions {
  file: string;
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  json: boolean;
  /** Plain lines: at most one per this many milliseconds (0: one per chunk read). */
  everyMs: number;
}

const REDRAW_MS = 100;
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

export class ImportProgressReporter {
  private readonly started = performance.now();
  private readonly tty: boolean;
  /** On a terminal the first frame is drawn at once; plain lines wait a period first. */
  private lastWrite: number;
  private latest: ImportProgress | null = null;
  private readAll = false;
  private written = false;

  constructor(private readonly options: ProgressOptions) {
    this.tty = options.out.isTTY === true && !options.json;
    this.lastWrite = this.tty || options.everyMs === 0 ? Number.NEGATIVE_INFINITY : this.started;
  }

  /** For `importFile`'s `onProgress`. */
  readonly update = (progress: ImportProgress): void => {
    const now = performance.now();
    const due = now - this.lastWrite >= (this.tty ? REDRAW_MS : this.options.everyMs);
    if (progress.bytesRead >= progress.totalBytes) {
      // Read to the end: said once (a last line without a line break still adds its record),
      // and by plain lines only when they said something before or the period has passed: a
      // quick import prints nothing but its result.
      const changed = !this.readAll || progress.records !== this.latest?.records;
      if (changed && (this.tty || this.written || due)) this.write(progress, now, true);
      this.readAll = true;
    } else if (due) {
      this.write(progress, now, false);
    }
    this.latest = progress;
  };

  /** Ends the redrawn line on a terminal, so what follows starts on a line of its own. */
  end(): void {
    if (this.tty && this.written) this.options.out.write('\n');
  }

  private write(progress: ImportProgress, now: number, finished: boolean): void {
    this.lastWrite = now;
    this.written = true;
    const seconds = (now - this.started) / 1000;
    const share = progress.totalBytes > 0 ? progress.bytesRead / progress.totalBytes : 1;
    const rate = seconds > 0 ? progress.records / seconds : 0;
    // Unknown in the first second: start-up would make it wild.
    const eta = share > 0 && seconds >= 1 ? (seconds * (1 - share)) / share : null;
    const { out, json, file } = this.options;
    if (json) {
      const figures = {
        file,
        records: progress.records,
        bytes_read: progress.bytesRead,
        total_bytes: progress.totalBytes,
        percent: Math.floor(share * 1000) / 10,
        records_per_second: Math.round(rate),
        eta_seconds: finished ? 0 : eta === null ? null : Math.round(eta),
        stage: finished ? 'committing' : 'reading',
      };
      out.write(`${JSON.stringify({ progress: figures })}\n`);
      return;
    }
    const percent = `${Math.floor(share * 100)}%`;
    const records = `${number(progress.records)} records`;
    const speed = `${number(rate)} records/s`;
    const remaining = finished
      ? `read in ${clock(seconds)}, committing…`
      : `ETA ${eta === null ? '?' : clock(eta)}`;
    if (this.tty) {
      const filled = Math.round(share * BAR_WIDTH);
      const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
      // What matters most first: a narrow terminal cuts the end.
      const line = `import ${bar} ${percent.padStart(4)}  ${remaining}  ${records}  ${speed}`;
      // Cut to the terminal's width: a wrapped line could not be redrawn in place.
      out.write(`\r${line.slice(0, (out.columns || 80) - 1)}\x1b[K`);
      return;
    }
    const size = `${percent} of ${megabytes(progress.totalBytes)}`;
    out.write(`cdapi import: ${size}, ${records}, ${speed}, ${remaining}\n`);
  }
}
