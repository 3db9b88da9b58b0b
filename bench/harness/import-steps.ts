/**
 * Where a timed import's time went, read from the progress lines `cdapi import --json` writes
 * on stderr: a line when the last record is read and one as each step of the commit starts
 * (src/cli/progress.ts), once it has written any (after its first period, 10 s). The import
 * target was missed on some machines and met on others; the steps say which part a machine
 * made slower, where sessions had timed them by hand.
 */

/** One part of the import and how long it took. */
export interface ImportStep {
  /**
   * `reading` (the records read, checked and written), a step of the commit as the CLI names
   * it (`indexes leaves`, `search expenses`, `feed`, `samples`, …; `committing` for the moment
   * between the last record and the first step), or `start-up and close` (the process's time
   * outside the import: starting, opening the database, and closing it at the end).
   */
  name: string;
  seconds: number;
}

interface ProgressLine {
  elapsed_seconds: number;
  stage: 'reading' | 'committing' | 'done';
  step?: string;
  table?: string;
}

function progressOf(line: string): ProgressLine | null {
  if (!line.startsWith('{"progress"')) return null;
  try {
    return (JSON.parse(line) as { progress: ProgressLine }).progress;
  } catch {
    return null;
  }
}

/**
 * The import's parts in order, from its stderr and the whole process's wall time; none when it
 * wrote no progress (an import shorter than the CLI's first period) or did not say it was done.
 */
export function importSteps(stderr: string, processSeconds: number): ImportStep[] {
  const starts: Array<{ name: string; at: number }> = [{ name: 'reading', at: 0 }];
  let doneAt: number | null = null;
  for (const line of stderr.split('\n')) {
    const progress = progressOf(line);
    if (progress === null) continue;
    if (progress.stage === 'done') doneAt = progress.elapsed_seconds;
    if (progress.stage !== 'committing') continue;
    const name = [progress.step ?? 'committing', progress.table].filter(Boolean).join(' ');
    if (starts[starts.length - 1]?.name !== name) {
      starts.push({ name, at: progress.elapsed_seconds });
    }
  }
  if (doneAt === null) return [];
  const ends = [...starts.slice(1).map((start) => start.at), doneAt];
  return [
    ...starts.map(({ name, at }, i) => ({ name, seconds: (ends[i] as number) - at })),
    { name: 'start-up and close', seconds: Math.max(0, processSeconds - doneAt) },
  ];
}

/** `reading 21.8, indexes leaves 6.2, …` (parts under 0.05 s left out). */
export function formatImportSteps(steps: readonly ImportStep[]): string {
  return steps
    .filter((step) => step.seconds >= 0.05)
    .map((step) => `${step.name} ${step.seconds.toFixed(1)}`)
    .join(', ');
}
