import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/cdapi.js', import.meta.url));

/** A free TCP port on the loopback interface (nothing listens on it when this returns). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Served {
  child: ChildProcess;
  /** The API base, e.g. http://127.0.0.1:PORT/api/company/v1. */
  base: string;
  /** The origin, for /healthz and /readyz. */
  origin: string;
  stdout: () => string;
  exit: Promise<number | null>;
}

/** Starts `cdapi serve` as a separate process with only `env`, and waits until it listens. */
export async function serve(env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), ...env },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + 30_000;
  while (!err.includes('listening on')) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`serve did not start: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const origin = `http://127.0.0.1:${port}`;
  return { child, base: `${origin}/api/company/v1`, origin, stdout: () => out, exit };
}
