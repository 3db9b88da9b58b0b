import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/cdapi.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cdapi` as a user would, with only the given configuration in its environment. */
export function cdapi(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
    cwd: options.cwd,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export function cdapiJson<T = unknown>(args: string[], env: Record<string, string>): T {
  const result = cdapi([...args, '--json'], env);
  if (result.status !== 0) throw new Error(`cdapi ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
