/** A record that cannot be imported; the whole import is rolled back. */
export class ImportError extends Error {
  readonly line: number;
  readonly field: string;
  readonly problem: string;

  constructor(line: number, field: string, problem: string) {
    super(`line ${line}: ${field}: ${problem}`);
    this.line = line;
    this.field = field;
    this.problem = problem;
    this.name = 'ImportError';
  }
}

/**
 * The import was stopped by a signal (Ctrl-C, a service manager's SIGTERM) before its commit:
 * rolled back like a failed one, the receipt files it had added removed. The CLI exits with the
 * shell's code for the signal (130, 143).
 */
export class ImportInterrupted extends Error {
  readonly exitCode: number;
  readonly signal: 'SIGINT' | 'SIGTERM';

  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super(
      `interrupted by ${signal}: nothing was imported, and the receipt files it had added are removed`,
    );
    this.signal = signal;
    this.exitCode = signal === 'SIGINT' ? 130 : 143;
    this.name = 'ImportInterrupted';
  }
}
