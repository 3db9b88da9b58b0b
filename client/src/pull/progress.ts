/** How a pull reports how far it is: a redrawn bar on a terminal, plain lines otherwise. */
export interface Progress {
  /** A new phase; `total` is the estimated number of items, or null when unknown. */
  start(label: string, total: number | null): void;
  advance(count: number): void;
  /** Ends the phase with its final figures. */
  finish(): void;
  /** A line of its own (a warning, say). */
  note(line: string): void;
}

interface Stream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;
const LINE_EVERY_MS = 2000;

const grouped = (n: number) => Math.round(n).toLocaleString('en-US');

/** `1 receipt`, `2 receipts`: a count and its label (a plural), singular for one. */
const counted = (n: number, label: string) =>
  `${grouped(n)} ${n === 1 ? label.replace(/s$/, '') : label}`;

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

class Phase {
  label = '';
  total: number | null = null;
  done = 0;
  startedAt = 0;

  begin(label: string, total: number | null): void {
    this.label = label;
    this.total = total;
    this.done = 0;
    this.startedAt = performance.now();
  }

  seconds(): number {
    return (performance.now() - this.startedAt) / 1000;
  }

  rate(): number {
    const seconds = this.seconds();
    return seconds > 0 ? this.done / seconds : 0;
  }

  /** `1,234/5,000 records · 850/s · ETA 0:05` (no total, no ETA). */
  figures(): string {
    const rate = `${grouped(this.rate())}/s`;
    if (this.total === null) return `${grouped(this.done)} ${this.label} · ${rate}`;
    // The total is an estimate (the lists' totals, without the deletions a later run applies):
    // past it, the count so far is the better one.
    const total = Math.max(this.total, this.done);
    const eta = this.rate() > 0 ? clock((total - this.done) / this.rate()) : '?';
    return `${grouped(this.done)}/${grouped(total)} ${this.label} · ${rate} · ETA ${eta}`;
  }
}

/** A bar redrawn in place with `\r`, at most every 100 ms. */
export function terminalProgress(stream: Stream): Progress {
  const phase = new Phase();
  let drawnAt = 0;
  const draw = () => {
    drawnAt = performance.now();
    let bar = '';
    if (phase.total !== null) {
      const share = phase.total > 0 ? Math.min(1, phase.done / phase.total) : 1;
      const filled = Math.round(share * BAR_WIDTH);
      bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% `;
    }
    stream.write(`\r\x1b[K${bar}${phase.figures()}`);
  };
  return {
    start(label, total) {
      phase.begin(label, total);
      draw();
    },
    advance(count) {
      phase.done += count;
      if (performance.now() - drawnAt >= REDRAW_MS) draw();
    },
    finish() {
      draw();
      stream.write('\n');
    },
    note(line) {
      stream.write(`\r\x1b[K${line}\n`);
      draw();
    },
  };
}

/** Plain lines for a log or a pipe: one when a phase starts, at most one every 2 s, one at its end. */
export function lineProgress(stream: Stream): Progress {
  const phase = new Phase();
  let writtenAt = 0;
  const line = (text: string) => {
    writtenAt = performance.now();
    stream.write(`cdapi-pull: ${text}\n`);
  };
  return {
    start(label, total) {
      phase.begin(label, total);
      line(`pulling ${label}${total === null ? '' : ` (about ${grouped(total)})`}`);
    },
    advance(count) {
      phase.done += count;
      if (performance.now() - writtenAt >= LINE_EVERY_MS) line(phase.figures());
    },
    finish() {
      line(`${counted(phase.done, phase.label)} in ${phase.seconds().toFixed(1)} s`);
    },
    note(text) {
      line(text);
    },
  };
}
