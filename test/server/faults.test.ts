import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { problem } from '../../src/schemas/problems.ts';
import { cdapi } from '../helpers/cli.ts';
import { testDialects, useDatabase } from '../helpers/databases.ts';
import { ownRedisSkip, testRedisUrl, useOwnRedis } from '../helpers/redis.ts';
import { freePort, type Served, serveCompany } from '../helpers/serve.ts';

/**
 * Fault injection: the database or Redis goes away while `cdapi serve` is under load, and comes
 * back. Both run on servers of the test's own (the shared ones stay untouched), which it stops
 * and starts again on the same port.
 */

const run = promisify(execFile);

/** A mix of the API's queries: key only, lists, a page of 100, a joined look-up, reference data. */
const SCENARIOS = ['/me', '/employees', '/leaves?per_page=100', '/expenses/1', '/leave-types'];

const STATEMENT_TIMEOUT_MS = 2000;
/**
 * No request may take longer, whatever the database does: a wait for a connection, then a query
 * (each bounded by the statement timeout, the query plus a second when the server does not
 * answer at all: src/db/connect.ts), with room to spare on a busy machine. Past it, a request
 * counts as hung.
 */
const BOUND_MS = 2 * STATEMENT_TIMEOUT_MS + 3000;
/** How long each outage lasts: past the bound, so a request that waits for the end is caught. */
const OUTAGE_MS = BOUND_MS + 1000;
/** How long the service may take to notice that PostgreSQL or Redis is back. */
const RECOVERY_MS = 15_000;
/** Each load client's pause between two requests. */
const LOAD_PAUSE_MS = 10;

// ---------------------------------------------------------------------------------------------
// A background load that records every answer, or its absence.

interface Outcome {
  path: string;
  startedAt: number;
  ms: number;
  /** 'hung': no whole answer within BOUND_MS; 'failed': the connection was refused or dropped. */
  status: number | 'hung' | 'failed';
  headers: Headers;
  body: string;
}

async function timedGet(url: string, headers: Record<string, string> = {}): Promise<Outcome> {
  const startedAt = Date.now();
  const signal = AbortSignal.timeout(BOUND_MS);
  const path = new URL(url).pathname.replace(/^\/api\/company\/v1/, '');
  try {
    const response = await fetch(url, { headers, signal });
    const body = await response.text();
    const ms = Date.now() - startedAt;
    return { path, startedAt, ms, status: response.status, headers: response.headers, body };
  } catch (error) {
    return {
      path,
      startedAt,
      ms: Date.now() - startedAt,
      status: signal.aborted ? 'hung' : 'failed',
      headers: new Headers(),
      body: String(error),
    };
  }
}

/**
 * `loops` clients, each asking the scenarios in turn (from its own offset) until stopped, at
 * the latest when the test ends (a failed assertion must not leave them running).
 */
function startLoad(t: TestContext, served: Served, headers: Record<string, string>, loops: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (offset: number) => {
    for (let i = offset; running; i += 1) {
      const outcome = await timedGet(`${served.base}${SCENARIOS[i % SCENARIOS.length]}`, headers);
      outcomes.push(outcome);
      // A steady load, not a flood: the machine runs other test files alongside this one, and
      // a refused connection (a crashed service) must not make the loop spin.
      await sleep(LOAD_PAUSE_MS);
    }
  };
  const loopsDone = Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  const stop = async (): Promise<Outcome[]> => {
    running = false;
    await loopsDone;
    return outcomes;
  };
  t.after(stop);
  return { outcomes, stop };
}

/** The first few outcomes that break `expected` (which names what is wrong), for one assert. */
function unexpected(outcomes: Outcome[], expected: (outcome: Outcome) => string | null): string[] {
  const wrong = outcomes
    .map((outcome) => {
      const why = expected(outcome);
      return why && `${why}: ${describeOutcome(outcome)}`;
    })
    .filter((why): why is string => why !== null);
  return wrong.length > 5 ? [...wrong.slice(0, 5), `… and ${wrong.length - 5} more`] : wrong;
}

const maxMs = (outcomes: Outcome[]) => Math.max(0, ...outcomes.map((o) => o.ms));
const countOf = (outcomes: Outcome[], status: number) =>
  outcomes.filter((o) => o.status === status).length;

/**
 * Polls until `condition` holds (returns true), and says how long that took. Otherwise it
 * returns why not yet, which the failure reports.
 */
async function within(ms: number, what: string, condition: () => Promise<true | string>) {
  const start = Date.now();
  for (;;) {
    const state = await condition();
    if (state === true) return Date.now() - start;
    if (Date.now() - start > ms) assert.fail(`not within ${ms} ms: ${what}; last: ${state}`);
    await sleep(100);
  }
}

const describeOutcome = (outcome: Outcome) =>
  `${outcome.path} ${outcome.status} (${outcome.ms} ms) ${outcome.body.slice(0, 300)}`;

/** `serveCompany`, and an assertion that the service is still running. */
async function servedCompany(t: TestContext, env: Record<string, string>, keyArgs: string[]) {
  const served = await serveCompany(t, env, keyArgs);
  const { child } = served.server;
  /** Fails the test at once, with what it wrote, when the service is no longer running. */
  const assertRunning = () => {
    if (child.exitCode !== null || child.signalCode !== null) {
      assert.fail(
        `the service exited (${child.exitCode ?? child.signalCode}): ${served.server.stderr()}`,
      );
    }
  };
  return { ...served, assertRunning };
}

/** The suite, or where it cannot run here, one skipped test that says why. */
function suiteUnless(skip: string | null, title: string, body: () => void): void {
  if (skip) it(title, { skip }, () => {});
  else describe(title, body);
}

// ---------------------------------------------------------------------------------------------
// A PostgreSQL cluster of the test's own.

/** initdb, pg_ctl and postgres: where pg_config says, else the newest /usr/lib/postgresql/N. */
function postgresBinDir(): string | null {
  const candidates: string[] = [];
  const configured = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (configured.status === 0) candidates.push(configured.stdout.trim());
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(root, version, 'bin')));
  }
  return (
    candidates.find((dir) =>
      ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(dir, b))),
    ) ?? null
  );
}

/** initdb and postgres refuse to run as root: as root, they run as this user. */
const SERVER_USER = 'postgres';
const isRoot = process.getuid?.() === 0;

function serverUserIds(): { uid: number; gid: number } | null {
  const id = (flag: string) => spawnSync('id', [flag, SERVER_USER], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const binDir = postgresBinDir();

function ownPostgresSkip(): string | null {
  let missing: string | null = null;
  if (!binDir) {
    missing =
      'no PostgreSQL server binaries (initdb, pg_ctl) via pg_config or /usr/lib/postgresql/*/bin';
  } else if (isRoot && (!serverUserIds() || spawnSync('runuser', ['--help']).status !== 0)) {
    missing = `running as root needs runuser and a "${SERVER_USER}" user for initdb and postgres`;
  } else if (spawnSync('pgrep', ['--version']).status !== 0) {
    missing = 'pgrep (procps) is not installed: it finds the processes to freeze';
  }
  if (!missing) return null;
  if (process.env.REQUIRE_ALL_SUITES === '1') {
    throw new Error(`REQUIRE_ALL_SUITES=1 but ${missing}`);
  }
  return `PostgreSQL outage suite skipped: ${missing}`;
}

interface OwnPostgres {
  /** A DATABASE_URL for the cluster's `postgres` database. */
  url: string;
  start(): Promise<void>;
  /** `fast` disconnects clients with an error; `immediate` is a crash from their side. */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** SIGSTOP / SIGCONT to every process of the cluster: connections stay, nothing answers. */
  freeze(): void;
  thaw(): void;
}

/** A fresh cluster on a free port, trust auth, no durability; removed when the test ends. */
async function useOwnPostgres(t: TestContext): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'cdapi-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const port = await freePort();
  if (isRoot) {
    const ids = serverUserIds() as { uid: number; gid: number };
    chownSync(dir, ids.uid, ids.gid);
  }
  const asServerUser = (bin: string, args: string[]) => {
    const command = join(binDir as string, bin);
    return isRoot
      ? run('runuser', ['-u', SERVER_USER, '--', command, ...args], { timeout: 60_000 })
      : run(command, args, { timeout: 60_000 });
  };
  const settings = [
    'listen_addresses=127.0.0.1',
    `port=${port}`,
    `unix_socket_directories=${dir}`,
    'fsync=off',
    'full_page_writes=off',
  ];
  const pgCtl = (...args: string[]) =>
    asServerUser('pg_ctl', ['-D', data, '-w', '-t', '30', ...args]);
  const own: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      const options = settings.map((setting) => `-c ${setting}`).join(' ');
      await pgCtl('start', '-l', log, '-o', options).catch((error: unknown) => {
        const serverLog = existsSync(log) ? readFileSync(log, 'utf8') : '';
        throw new Error(`PostgreSQL did not start: ${error}\n${serverLog}`);
      });
    },
    async stop(mode) {
      await pgCtl('stop', '-m', mode);
    },
    freeze: () => signalCluster('SIGSTOP'),
    thaw: () => signalCluster('SIGCONT'),
  };
  /** The postmaster and its children (each of which is its own process group). */
  const signalCluster = (signal: NodeJS.Signals) => {
    const postmaster = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '';
    const children = spawnSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).stdout ?? '';
    for (const pid of [postmaster, ...children.split('\n')].filter(Boolean)) {
      try {
        process.kill(Number(pid), signal);
      } catch {
        // A backend that has just exited.
      }
    }
  };
  t.after(async () => {
    if (existsSync(join(data, 'postmaster.pid'))) signalCluster('SIGCONT');
    await own.stop('immediate').catch(() => {}); // not running: nothing to stop
    rmSync(dir, { recursive: true, force: true });
  });
  const initdb = ['-D', data, '--auth=trust', '--username=postgres', '--encoding=UTF8'];
  await asServerUser('initdb', [...initdb, '--no-sync']);
  await own.start();
  return own;
}

// ---------------------------------------------------------------------------------------------

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');
const postgresSkip = postgres?.skip ?? ownPostgresSkip();

/** What an API request answers while the database is away (src/http/error-handler.ts). */
const UNAVAILABLE = problem(
  'service_unavailable',
  'The service is temporarily unavailable; retry shortly.',
);

/** 200, or the one 503 a client can act on; anything else (a 500, a hang, a drop) is a bug. */
function okOrUnavailable(outcome: Outcome): string | null {
  if (outcome.status === 200) return null;
  if (outcome.status !== 503) return 'neither 200 nor 503';
  if (!outcome.headers.get('content-type')?.startsWith('application/problem+json')) {
    return `503 as ${outcome.headers.get('content-type')}`;
  }
  if (outcome.headers.get('retry-after') !== '5') return '503 without Retry-After: 5';
  try {
    assert.deepEqual(JSON.parse(outcome.body), UNAVAILABLE);
  } catch {
    return '503 with another body';
  }
  return null;
}

/** How PostgreSQL goes away, and comes back on the same port with the same data. */
const OUTAGES: Array<{
  name: string;
  begin(cluster: OwnPostgres): Promise<void> | void;
  end(cluster: OwnPostgres): Promise<void> | void;
}> = [
  // Clients get "terminating connection"; new connections are refused.
  { name: 'a fast shutdown', begin: (c) => c.stop('fast'), end: (c) => c.start() },
  // A crash, from the clients' side: their connections just drop.
  { name: 'an immediate shutdown', begin: (c) => c.stop('immediate'), end: (c) => c.start() },
  // Connections stay open and nothing answers, as when the host or the network fails.
  { name: 'a frozen server', begin: (c) => c.freeze(), end: (c) => c.thaw() },
];

suiteUnless(postgresSkip, 'PostgreSQL stopped under load', () => {
  it('answers 200 or 503 service_unavailable within a bound, and recovers without a restart, after each outage', async (t) => {
    const cluster = await useOwnPostgres(t);
    const env = {
      DATABASE_URL: cluster.url,
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      // Fewer connections than clients: requests also wait for the pool while it is down.
      DATABASE_POOL_MAX: '4',
      LOG_LEVEL: 'warn',
    };
    const migrated = cdapi(['migrate'], env);
    assert.equal(migrated.status, 0, migrated.stderr);
    const unlimited = ['--per-minute', '1000000000', '--per-hour', '1000000000'];
    const { server, assertRunning, headers } = await servedCompany(t, env, unlimited);
    const everyScenarioAnswers = async (): Promise<true | string> => {
      assertRunning();
      for (const path of [
        ...SCENARIOS.map((p) => `${server.base}${p}`),
        `${server.origin}/readyz`,
      ]) {
        const outcome = await timedGet(path, headers);
        if (outcome.status !== 200) return describeOutcome(outcome);
      }
      return true;
    };
    assert.equal(await everyScenarioAnswers(), true, 'the service answers before the outage');

    for (const outage of OUTAGES) {
      const load = startLoad(t, server, headers, 6);
      await sleep(1000);
      const stopping = Date.now();
      await outage.begin(cluster);
      const down = Date.now();
      const readyWhileDown = timedGet(`${server.origin}/readyz`);
      await sleep(OUTAGE_MS);
      const restarting = Date.now();
      await outage.end(cluster);
      const recoveryMs = await within(
        RECOVERY_MS,
        `every scenario 200 after ${outage.name}`,
        everyScenarioAnswers,
      );
      const outcomes = await load.stop();

      assertRunning();
      assert.deepEqual(unexpected(outcomes, okOrUnavailable), [], `during ${outage.name}`);
      const whileDown = outcomes.filter((o) => o.startedAt >= down && o.startedAt < restarting);
      assert.ok(countOf(whileDown, 503) > 0, 'requests while the database is down answer 503');
      const ready = await readyWhileDown;
      assert.equal(ready.status, 503, describeOutcome(ready));
      assert.equal(ready.headers.get('retry-after'), '5');
      assert.deepEqual(
        JSON.parse(ready.body),
        problem('service_unavailable', 'The database is not reachable.'),
      );
      t.diagnostic(
        `${outage.name}: ${outcomes.length} requests, ${countOf(outcomes, 503)} answered 503, ` +
          `slowest during the outage ${maxMs(outcomes.filter((o) => o.startedAt >= stopping))} ms, ` +
          `recovered ${recoveryMs} ms after PostgreSQL was back`,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------

const redis = testRedisUrl();
const redisSkip = redis.skip ?? ownRedisSkip();
const PER_MINUTE = 20;
const REDIS_KEY_PREFIX = 'cdapi-faults:';

/** 200 or 429, and always the rate-limit headers: a Redis outage never reaches the client. */
function limitedNeverFailed(outcome: Outcome): string | null {
  if (outcome.status !== 200 && outcome.status !== 429) return 'neither 200 nor 429';
  if (outcome.headers.get('x-ratelimit-limit') !== String(PER_MINUTE))
    return 'no rate-limit headers';
  if (outcome.status === 429 && !outcome.headers.get('retry-after'))
    return '429 without Retry-After';
  return null;
}

suiteUnless(redisSkip, 'Redis stopped under load', () => {
  it('reports ready again as soon as Redis returns, with no request in between', async (t) => {
    const own = await useOwnRedis(t);
    const database = await useDatabase(t, 'sqlite');
    const { server, headers } = await servedCompany(
      t,
      { DATABASE_URL: database.url, REDIS_URL: own.url, REDIS_KEY_PREFIX },
      ['--per-minute', String(PER_MINUTE)],
    );
    const readiness = async () => JSON.parse((await timedGet(`${server.origin}/readyz`)).body);
    await own.kill();
    // One request finds Redis gone; then no more.
    assert.equal((await timedGet(`${server.origin}/api/company/v1/me`, headers)).status, 200);
    assert.equal((await readiness()).status, 'degraded');
    await own.start();
    await within(RECOVERY_MS, 'ready again without a request', async () => {
      const state = await readiness();
      return state.status === 'ok' || JSON.stringify(state);
    });
  });

  it('counts per instance while Redis is down, reports degraded, and shares counts again when it returns', async (t) => {
    const own = await useOwnRedis(t);
    const database = await useDatabase(t, 'sqlite');
    const { server, keyId, headers } = await servedCompany(
      t,
      { DATABASE_URL: database.url, REDIS_URL: own.url, REDIS_KEY_PREFIX },
      ['--per-minute', String(PER_MINUTE)],
    );
    // Degraded or not, the instance stays ready: 200 with the state in the body.
    const readiness = async () => {
      const ready = await timedGet(`${server.origin}/readyz`);
      assert.equal(ready.status, 200, describeOutcome(ready));
      return JSON.parse(ready.body);
    };
    assert.deepEqual(await readiness(), {
      status: 'ok',
      checks: { database: 'ok', redis: 'ok' },
    });
    const counted = async () => {
      const client = new Redis(own.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        return await client.zcard(`${REDIS_KEY_PREFIX}ratelimit:${keyId}`);
      } finally {
        client.disconnect();
      }
    };

    // Redis's window fills up and refuses; then Redis dies while the load goes on.
    const load = startLoad(t, server, headers, 4);
    await within(
      BOUND_MS,
      'the shared window is full',
      async () =>
        countOf(load.outcomes, 429) > 0 || `${load.outcomes.length} requests, none refused`,
    );
    assert.equal(await counted(), PER_MINUTE);
    await own.kill();
    await sleep(2000);
    assert.deepEqual(await readiness(), {
      status: 'degraded',
      checks: { database: 'ok', redis: 'unreachable' },
    });
    // Back on the same port, empty (it keeps nothing on disk): requests are counted there
    // again, so its window fills up too.
    await own.start();
    const recoveryMs = await within(RECOVERY_MS, 'requests counted in Redis again', async () => {
      const state = { counted: await counted(), readiness: await readiness() };
      return state.counted === PER_MINUTE && state.readiness.status === 'ok'
        ? true
        : JSON.stringify(state);
    });
    const outcomes = await load.stop();

    assert.deepEqual(unexpected(outcomes, limitedNeverFailed), []);
    // Each request was counted by Redis, before the outage and again once it restarted empty;
    // in between, the instance's own window held what Redis had granted it, so it refused them
    // all: two full windows, exactly (three when the fallback started empty).
    assert.equal(countOf(outcomes, 200), 2 * PER_MINUTE);
    const redisLines = server.logLines().filter((line) => /^Redis /.test(line.msg));
    assert.deepEqual(
      redisLines.map((line) => [line.level, line.msg]),
      [
        [40, 'Redis unreachable: rate limits fall back to per-instance counting until it returns'],
        [30, 'Redis reachable again: rate limits are shared across instances'],
      ],
      'one warning for the outage, not one a request, and one line for the recovery',
    );
    t.diagnostic(
      `${outcomes.length} requests, ${countOf(outcomes, 429)} answered 429, slowest ${maxMs(outcomes)} ms, ` +
        `Redis used again ${recoveryMs} ms after it was back`,
    );
  });
});
