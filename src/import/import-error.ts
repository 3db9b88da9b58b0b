/** A record that cannot be imported; the whole import is rolled back. */
export class ImportError extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`line ${line}: ${field}: ${problem}`);
    this.name = 'ImportError';
  }
}
