import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { freePort } from './serve.ts';

/**
 * The Redis suites run when TEST_REDIS_URL names a server. With REQUIRE_ALL_SUITES=1 (CI) a
 * missing server fails the run instead of skipping.
 */
export function testRedisUrl(): { url: string; skip: null } | { url: null; skip: string } {
  const url = process.env.TEST_REDIS_URL;
  if (url) return { url, skip: null };
  if (process.env.REQUIRE_ALL_SUITES === '1') {
    throw new Error(
      'REQUIRE_ALL_SUITES=1 but TEST_REDIS_URL is not set: the Redis suites cannot run',
    );
  }
  return { url: null, skip: 'Redis suite skipped: TEST_REDIS_URL is not set' };
}

/** A key prefix of this test's own; every key under it is deleted when the test ends. */
export function useRedisPrefix(t: TestContext, url: string): string {
  const prefix = `cdapi-test:${randomBytes(6).toString('hex')}:`;
  t.after(async () => {
    const redis = new Redis(url, { lazyConnect: true });
    try {
      await redis.connect();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });
  return prefix;
}

/** Collects what a store logs, for assertions. */
export function recordingLog() {
  const lines: Array<{ level: 'warn' | 'info'; message: string }> = [];
  /** The details as the service's log writes them (pino's error serializer), one JSON each. */
  const written: string[] = [];
  const record = (details: object) =>
    written.push(
      JSON.stringify(details, (_key, value) =>
        value instanceof Error ? pino.stdSerializers.err(value) : value,
      ),
    );
  return {
    lines,
    written,
    warn: (details: object, message: string) => {
      record(details);
      lines.push({ level: 'warn', message });
    },
    info: (details: object, message: string) => {
      record(details);
      lines.push({ level: 'info', message });
    },
  };
}

const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? 'redis-server';

function redisServerAvailable(): boolean {
  return spawnSync(REDIS_SERVER, ['--version']).status === 0;
}

/** Whether a test may start a Redis server of its own (to stop, freeze and restart it). */
export function ownRedisSkip(): string | null {
  if (redisServerAvailable()) return null;
  if (process.env.REQUIRE_ALL_SUITES === '1') {
    throw new Error(`REQUIRE_ALL_SUITES=1 but ${REDIS_SERVER} is not installed`);
  }
  return `Redis outage suite skipped: ${REDIS_SERVER} is not installed`;
}

/** A private Redis server on its own port, which the test may kill and start again. */
export interface OwnRedis {
  url: string;
  start(): Promise<void>;
  /** SIGKILL: the connection drops at once. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: the connection stays up but nothing answers. */
  freeze(): void;
  thaw(): void;
}

/** With `password`, the server asks every connection for it (`requirepass`). */
export async function useOwnRedis(
  t: TestContext,
  { password }: { password?: string } = {},
): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const own: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const started = spawn(
        REDIS_SERVER,
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
          ...(password === undefined ? [] : ['--requirepass', password]),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      child = started;
      let out = '';
      started.stdout?.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        started.stdout?.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('Ready to accept connections')) resolve();
        });
        started.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
      });
    },
    async kill() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null) return;
      running.kill('SIGCONT');
      running.kill('SIGKILL');
      await once(running, 'exit');
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
  };
  t.after(() => own.kill());
  await own.start();
  return own;
}
