import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cdapiJson } from './cli.ts';
import { useTempDir } from './databases.ts';
import { leaksIn, NO_LEAKS } from './log-leaks.ts';
import { smallCompany, writeNdjson } from './records.ts';

const BIN = fileURLToPath(new URL('../../bin/cdapi.js', import.meta.url));

/** Ports the kernel hands out to outgoing connections, read once: [first, last]. */
const EPHEMERAL = ((): [number, number] => {
  try {
    const [first, last] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (first !== undefined && last !== undefined && Number.isInteger(first + last)) {
      return [first, last];
    }
  } catch {
    // Not Linux: the IANA range, which most other systems use.
  }
  return [49152, 65535];
})();

/** Where test processes of every suite and every run reserve the ports they hand out. */
const RESERVED = join(tmpdir(), 'cdapi-test-ports');
/** A reservation outlives the start of the process it is for; an older one is abandoned. */
const RESERVATION_MS = 120_000;

/** This process's reservations, given up when it exits (its test servers are gone by then). */
const reservations = new Set<string>();
process.once('exit', () => {
  for (const file of reservations) rmSync(file, { force: true });
});

/** Takes `port` for this process unless a test process reserved it less than two minutes ago. */
function reserve(port: number): boolean {
  const file = join(RESERVED, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < RESERVATION_MS) return false;
      writeFileSync(file, String(process.pid));
    } catch {
      return false;
    }
  }
  reservations.add(file);
  return true;
}

/** Whether a listener can bind `port` on the loopback interface now. */
async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * A free TCP port on the loopback interface for a process a test starts (nothing listens on it
 * when this returns). Not one the kernel picks for `listen(0)`: once closed, such a port is
 * free for any of the outgoing connections the suites make at once (to PostgreSQL, Redis, the
 * services they test) to take as its own end before the process listens, which then fails with
 * EADDRINUSE. So it comes from below the kernel's range for outgoing connections, reserved
 * through a file so that the test processes running beside it, whose choices the kernel does
 * not see until they listen, pass it over.
 */
export async function freePort(): Promise<number> {
  mkdirSync(RESERVED, { recursive: true });
  const first = 10_000;
  const last = EPHEMERAL[0] > first + 1_000 ? EPHEMERAL[0] - 1 : 65_535;
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = first + Math.floor(Math.random() * (last - first + 1));
    if (port >= EPHEMERAL[0] && port <= EPHEMERAL[1]) continue;
    if (reserve(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port between ${first} and ${last}`);
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
