/**
 * The error every configuration check throws: it names the environment variable at fault, and
 * the CLI prints it as one line.
 */

export class ConfigError extends Error {
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.variable = variable;
    this.name = 'ConfigError';
  }
}
