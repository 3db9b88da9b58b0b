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
