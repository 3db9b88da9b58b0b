import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cdapiJson } from './cli.ts';
import { useTempDir } from './databases.ts';
import { leaksIn, NO_LEAKS } from './log-leaks.ts';
import { smallCompany, writeNdjson } from './records.ts';

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
  stderr: () => string;
  /** The JSON lines of its log (stdout) so far. */
  logLines: () => Array<Record<string, unknown> & { level: number; msg: string }>;
  exit: Promise<number | null>;
}

/**
 * Starts `cdapi serve` as a separate process with only `env`, and waits until it listens; with
 * `ipc`, over an IPC channel as well (as a cluster worker or pm2 runs it).
 */
export async function serve(
  env: Record<string, string>,
  options: { ipc?: boolean } = {},
): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), ...env },
    stdio: options.ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : 'pipe',
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
  const logLines = () =>
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return {
    child,
    base: `${origin}/api/company/v1`,
    origin,
    stdout: () => out,
    stderr: () => err,
    logLines,
    exit,
  };
}

/**
 * One company (`smallCompany(1, 0)`) and a key of it (`keyArgs` go to `cdapi keys create`),
 * served by `cdapi serve` over `env`, which names the database; it logs at trace unless `env`
 * says otherwise. Killed when the test ends, when its log must hold neither the key nor the
 * signing secret nor a sensitive value, whatever the test did.
 */
export async function serveCompany(
  t: TestContext,
  env: Record<string, string>,
  keyArgs: string[] = [],
) {
  const dir = useTempDir(t);
  const fullEnv = {
    RECEIPTS_DIR: join(dir, 'receipts'),
    SIGNING_SECRET: 'serve-test-signing-secret-0123456789',
    LOG_LEVEL: 'trace',
    ...env,
  };
  cdapiJson(['import', writeNdjson(dir, smallCompany(1, 0))], fullEnv);
  const created = cdapiJson<{ id: number; key: string }>(
    ['keys', 'create', '--company', '1', '--name', 't', ...keyArgs],
    fullEnv,
  );
  const server = await serve(fullEnv);
  t.after(() => {
    server.child.kill('SIGKILL');
    assert.deepEqual(
      leaksIn(server.stdout(), [created.key, fullEnv.SIGNING_SECRET]),
      NO_LEAKS,
      'the service log holds no key, signing secret or sensitive value',
    );
  });
  return { server, keyId: created.id, headers: { authorization: `Bearer ${created.key}` } };
}
