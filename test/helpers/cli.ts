import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/cdapi.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The given configuration, and PATH and HOME, as a user's shell would have them. */
function onlyThis(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
}

/** Runs `cdapi` as a user would, with only the given configuration in its environment. */
export function cdapi(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: onlyThis(env),
    encoding: 'utf8',
    timeout: 60_000,
    cwd: options.cwd,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `cdapi` run without blocking this process: for a command that talks to a server this test
 * runs itself (spawnSync would hold the server's event loop for as long as the command runs).
 */
export function cdapiAsync(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: onlyThis(env),
        encoding: 'utf8',
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

export function cdapiJson<T = unknown>(args: string[], env: Record<string, string>): T {
  const result = cdapi([...args, '--json'], env);
  if (result.status !== 0) throw new Error(`cdapi ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/**
 * Runs a command-line program whose stdout is a pipe with its reading end closed before the
 * program writes (`program | head` once head has read enough): its exit code and its stderr.
 */
export async function runWithOutputClosed(
  bin: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: onlyThis(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [status] = await once(child, 'close');
  return { status, stderr };
}
