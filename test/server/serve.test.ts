import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Dialect } from '../../src/db/connect.ts';
import { SERVICE_ENV, SERVICE_NODE_OPTIONS } from '../../src/heap.ts';
import { cdapi, cdapiJson } from '../helpers/cli.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  company,
  employee,
  expense,
  ndjson,
  smallCompany,
  writeJpeg,
  writeNdjson,
} from '../helpers/records.ts';
import { freePort, type Served, serve, serveCompany } from '../helpers/serve.ts';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/**
 * `cdapi serve` on a new SQLite file, with an admin listener (`token`) and the timeouts a test
 * of requests that arrive slowly wants: 1 s for the headers, `requestTimeoutMs` for the request.
 */
async function servedWithAdmin(t: TestContext, requestTimeoutMs: number) {
  const path = join(useTempDir(t), 'serve.db');
  const adminPort = await freePort();
  const token = 'slow-requests-admin-token-0123456789abcdef';
  const server = await serve({
    DATABASE_URL: `sqlite:${path}`,
    SIGNING_SECRET: 'slow-requests-signing-secret-0123456789',
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN: token,
  });
  t.after(() => server.child.kill('SIGKILL'));
  return { path, adminPort, token, server };
}

/** One company and a key on a fresh database, served by `cdapi serve` with `extraEnv`. */
async function servedCompany(
  t: TestContext,
  dialect: Dialect,
  options: { extraEnv?: Record<string, string>; keyArgs?: string[] } = {},
) {
  const database = await useDatabase(t, dialect);
  const env = { DATABASE_URL: database.url, ...options.extraEnv };
  const { server, headers } = await serveCompany(t, env, options.keyArgs);
  return { database, server, headers };
}

/** A client that holds a lock the list queries need, so requests provably wait inside the server. */
async function lockedTable(databaseUrl: string, table: string) {
  const locker = new pg.Client({ connectionString: databaseUrl });
  locker.on('error', () => {}); // the database is dropped with force at teardown
  await locker.connect();
  await locker.query('begin');
  await locker.query(`lock table ${table} in access exclusive mode`);
  // Inside the locker's transaction, pg_stat_activity is a snapshot taken at its first read:
  // cleared before each poll, or a poll before the requests arrive is all it sees.
  const waiting = async () => {
    await locker.query('select pg_stat_clear_snapshot()');
    const { rows } = await locker.query(
      "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
    );
    return Number(rows[0].count);
  };
  return {
    reached: () => eventually(async () => (await waiting()) >= 1, 'a request reached the database'),
    async release() {
      await locker.query('commit');
      await locker.end();
    },
  };
}

/**
 * A TCP relay to PostgreSQL that can freeze: every connection through it then stops carrying
 * bytes either way, and nothing is closed (a hung host or proxy, as the server sees it).
 */
async function freezableRelay(t: TestContext, databaseUrl: string) {
  const target = new URL(databaseUrl);
  const pairs: Array<[Socket, Socket]> = [];
  const relay = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [inbound, outbound]) socket.on('error', () => {});
    inbound.pipe(outbound).pipe(inbound);
    pairs.push([inbound, outbound]);
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  t.after(() => {
    for (const pair of pairs) for (const socket of pair) socket.destroy();
    relay.close();
  });
  const relayed = new URL(databaseUrl);
  relayed.port = String((relay.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    freeze() {
      for (const pair of pairs) for (const socket of pair) socket.unpipe().pause();
    },
  };
}

describeEachDialect('cdapi serve', (dialect) => {
  it('logs one JSON line a request, never the key or the query string, and exits 0 on SIGTERM', async (t) => {
    const { server, headers } = await servedCompany(t, dialect);
    const response = await fetch(`${server.base}/employees?search=yilmaz`, {
      headers: { ...headers, 'x-request-id': 'serve-test-1' },
    });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { meta: { total: number } }).meta.total, 1);
    server.child.kill('SIGTERM');
    assert.equal(await server.exit, 0);
    await assert.rejects(fetch(`${server.base}/me`, { headers }));

    const lines = server.logLines();
    const logged = lines.find((line) => line.reqId === 'serve-test-1');
    assert.ok(logged, 'the request is logged');
    assert.deepEqual(
      { method: logged.method, route: logged.route, status: logged.status, msg: logged.msg },
      { method: 'GET', route: '/api/company/v1/employees', status: 200, msg: 'request' },
    );
    assert.equal(typeof logged.durationMs, 'number');
    assert.ok(!server.stdout().includes('yilmaz'), 'query strings are never logged');
    assert.ok(lines.some((line) => line.msg === 'shutting down'));
    const done = lines.find((line) => line.msg === 'shut down');
    assert.equal(typeof done?.durationMs, 'number', 'the end of the shutdown is logged');
    // V8 took the heap setting the CLI gives it (src/heap.ts): an unknown flag is only reported.
    assert.ok(!server.stderr().includes('unrecognized flag'), server.stderr());
  });

  it('warns once at the start when RECEIPTS_DIR does not exist or PUBLIC_BASE_URL is not the API’s, and serves', async (t) => {
    const receipts = join(useTempDir(t), 'not-made');
    const { server, headers } = await servedCompany(t, dialect, {
      extraEnv: { RECEIPTS_DIR: receipts, PUBLIC_BASE_URL: 'https://api.example.com' },
    });
    assert.equal((await fetch(`${server.base}/me`, { headers })).status, 200);
    await eventually(
      async () => server.logLines().filter((line) => line.level === 40).length >= 2,
      'both warnings are logged',
    );
    const warnings = server.logLines().filter((line) => line.level === 40);
    assert.deepEqual(
      warnings.map(({ msg, receiptsDir, publicBaseUrl }) => ({ msg, receiptsDir, publicBaseUrl })),
      [
        {
          msg: 'RECEIPTS_DIR does not exist yet: receipt images answer 404 until an import stores them there',
          receiptsDir: receipts,
          publicBaseUrl: undefined,
        },
        {
          msg: 'PUBLIC_BASE_URL does not end in /api/company/v1: links in bodies and receipt redirects are built under it, which is right only if a proxy serves the API there',
          receiptsDir: undefined,
          publicBaseUrl: 'https://api.example.com',
        },
      ],
    );
  });

  it('logs an error at the start when RECEIPTS_DIR does not exist and the database holds receipts', async (t) => {
    const database = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    await writeJpeg(dir, 'slip.jpg');
    const env = {
      DATABASE_URL: database.url,
      RECEIPTS_DIR: join(dir, 'receipts'),
      SIGNING_SECRET: 'serve-test-signing-secret-0123456789',
    };
    const records = [
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'slip.jpg' } }),
    ];
    cdapiJson(['import', writeNdjson(dir, records)], env);
    const wrong = join(dir, 'elsewhere');
    const server = await serve({ ...env, RECEIPTS_DIR: wrong });
    t.after(() => server.child.kill('SIGKILL'));
    // The log (stdout) may reach the test after the start-up line (stderr).
    await eventually(
      async () => server.logLines().some((line) => line.level === 50),
      'the error is logged',
    );
    const errors = server.logLines().filter((line) => line.level === 50);
    assert.deepEqual(
      errors.map(({ msg, receiptsDir }) => ({ msg, receiptsDir })),
      [
        {
          msg: 'RECEIPTS_DIR does not exist yet, but the database holds receipts: every receipt image answers 404 until RECEIPTS_DIR names their folder',
          receiptsDir: wrong,
        },
      ],
    );
  });

  it('stops at the start, naming RECEIPTS_DIR, when it names a file', async (t) => {
    const database = await useDatabase(t, dialect);
    const file = join(useTempDir(t), 'receipts.txt');
    writeFileSync(file, 'not a folder');
    const result = cdapi(['serve', '--port', String(await freePort())], {
      DATABASE_URL: database.url,
      RECEIPTS_DIR: file,
      SIGNING_SECRET: 'serve-test-signing-secret-0123456789',
    });
    assert.equal(result.status, 1);
    assert.equal(result.stderr, `cdapi: configuration: RECEIPTS_DIR: is not a folder: ${file}\n`);
  });

  it('keeps serving with per-instance limits and reports degraded when Redis is unreachable', async (t) => {
    const { server, headers } = await servedCompany(t, dialect, {
      extraEnv: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
      keyArgs: ['--per-minute', '2'],
    });

    const ready = await fetch(`${server.origin}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(ready.headers.get('cache-control'), 'no-store');
    const alive = await fetch(`${server.origin}/healthz`);
    assert.equal(alive.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await ready.json(), {
      status: 'degraded',
      checks: { database: 'ok', redis: 'unreachable' },
    });
    const statuses = [];
    for (let i = 0; i < 3; i += 1)
      statuses.push((await fetch(`${server.base}/me`, { headers })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const warnings = server
      .logLines()
      .filter((line) => line.level === 40 && /Redis unreachable/.test(line.msg));
    assert.equal(warnings.length, 1, 'one warning, not one a request');
  });

  if (dialect === 'postgres') {
    it('logs requests whose clients reset their connections, working or queued, without an error line', async (t) => {
      const metricsPort = await freePort();
      const { database, server, headers } = await servedCompany(t, dialect, {
        extraEnv: {
          MAX_CONCURRENT_REQUESTS: '1',
          MAX_QUEUE_WAIT_MS: '60000',
          METRICS_PORT: String(metricsPort),
        },
      });
      const queued = async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return /^cdapi_requests_in_progress\{state="queued"\} 1$/m.test(text);
      };
      const send = async (path: string, requestId: string) => {
        const socket = connect(Number(new URL(server.origin).port), '127.0.0.1');
        socket.on('error', () => {});
        await once(socket, 'connect');
        socket.write(
          `GET ${new URL(server.base).pathname}${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: ${headers.authorization}\r\nX-Request-Id: ${requestId}\r\n\r\n`,
        );
        return socket;
      };
      const logged = (requestId: string) =>
        eventually(
          async () => server.logLines().some((line) => line.reqId === requestId),
          `${requestId} is logged`,
        );
      const lock = await lockedTable(database.url, 'leaves');
      // One request works (its query waits on the lock), holding the only place; the next waits
      // for it in the queue.
      const working = await send('/leaves', 'given-up-working');
      await lock.reached();
      const waiting = await send('/employees', 'given-up-queued');
      await eventually(queued, 'the second request is queued');
      waiting.resetAndDestroy();
      await logged('given-up-queued');
      working.resetAndDestroy();
      await logged('given-up-working');
      await lock.release();
      // The query ends and its answer has nowhere to go: nothing more is logged of it.
      assert.equal((await fetch(`${server.base}/leaves`, { headers })).status, 200);
      server.child.kill('SIGTERM');
      assert.equal(await server.exit, 0);
      const lines = server.logLines();
      for (const [requestId, route] of [
        ['given-up-working', '/api/company/v1/leaves'],
        ['given-up-queued', '/api/company/v1/employees'],
      ]) {
        const given = lines.filter((line) => line.reqId === requestId);
        assert.equal(given.length, 1, JSON.stringify(given));
        const [line] = given;
        assert.deepEqual(
          { msg: line?.msg, method: line?.method, route: line?.route, status: line?.status },
          { msg: 'request aborted by the client', method: 'GET', route, status: undefined },
        );
        assert.equal(typeof line?.durationMs, 'number');
      }
      // The key was known once the working request was let in (the queued one never got there).
      assert.equal(typeof lines.find((line) => line.reqId === 'given-up-working')?.keyId, 'number');
      assert.deepEqual(
        lines.filter((line) => line.level >= 50),
        [],
        'no error line',
      );
    });

    it('exits 0 on SIGTERM when PostgreSQL stops answering, its connections dropped', async (t) => {
      const database = await useDatabase(t, dialect);
      const dir = useTempDir(t);
      const env = {
        DATABASE_URL: database.url,
        RECEIPTS_DIR: join(dir, 'receipts'),
        SIGNING_SECRET: 'serve-test-signing-secret-0123456789',
      };
      cdapiJson(['import', writeNdjson(dir, smallCompany(1, 0))], env);
      const { key } = cdapiJson<{ key: string }>(
        ['keys', 'create', '--company', '1', '--name', 't'],
        env,
      );
      const relay = await freezableRelay(t, database.url);
      const server = await serve({ ...env, DATABASE_URL: relay.url });
      t.after(() => server.child.kill('SIGKILL'));
      const headers = { authorization: `Bearer ${key}` };
      // The pool and the connection that hears data versions are open.
      assert.equal((await fetch(`${server.base}/leaves`, { headers })).status, 200);
      relay.freeze();
      server.child.kill('SIGTERM');
      // Each close waits PG_CLOSE_WAIT_MS (3 s) for the goodbye; it waited forever before.
      const exited = await Promise.race([server.exit, sleep(20_000).then(() => 'still running')]);
      assert.equal(exited, 0, server.stderr());
    });

    for (const [signal, code] of [
      ['SIGTERM', 0],
      // No reload: the same stop, then the code of a process a hangup ended, which a service
      // manager that restarts on failure restarts.
      ['SIGHUP', 129],
    ] as const) {
      it(`finishes the requests in flight when ${signal} arrives, refusing new connections, then exits ${code}`, async (t) => {
        const { database, server, headers } = await servedCompany(t, dialect);
        // Hold a lock the list query needs, so the requests are provably inside the server.
        const lock = await lockedTable(database.url, 'leaves');
        const inFlight = Array.from({ length: 5 }, () =>
          fetch(`${server.base}/leaves`, { headers }).then((r) => r.status),
        );
        // In flight: at least one query waits on the lock; the others wait behind it in the pool.
        await lock.reached();
        await new Promise((resolve) => setTimeout(resolve, 300));

        server.child.kill(signal);
        // A second hangup during the drain changes nothing.
        if (signal === 'SIGHUP') {
          await new Promise((resolve) => setTimeout(resolve, 100));
          server.child.kill(signal);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(server.child.exitCode, null, 'still running while requests are in flight');
        await assert.rejects(
          fetch(`${server.base}/me`, { headers }),
          (error: Error & { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED',
          'a new connection is refused while the requests in flight finish',
        );
        await lock.release();
        assert.deepEqual(await Promise.all(inFlight), [200, 200, 200, 200, 200]);
        assert.equal(await server.exit, code);
        assert.match(server.stdout(), new RegExp(`"signal":"${signal}","msg":"shutting down"`));
      });
    }
  }
});

describeEachDialect('cdapi serve shutting down under load', (dialect) => {
  it('completes every request in flight at SIGTERM, refuses new connections and exits 0 within 10 s', async (t) => {
    const { server, headers } = await servedCompany(t, dialect, {
      keyArgs: ['--per-minute', '1000000', '--per-hour', '10000000'],
    });
    const paths = ['/leaves?per_page=100', '/employees?search=yil', '/expenses/1', '/me'];
    interface Outcome {
      sentAt: number;
      result: number | string;
    }
    const outcomes: Outcome[] = [];
    let sigtermAt = Number.POSITIVE_INFINITY;
    // Each loop sends its next request as soon as the last is answered, until one fails.
    const loop = async (n: number) => {
      for (let i = n; ; i += 1) {
        const outcome: Outcome = { sentAt: performance.now(), result: 'pending' };
        outcomes.push(outcome);
        try {
          const response = await fetch(`${server.base}${paths[i % paths.length]}`, {
            headers,
            signal: AbortSignal.timeout(15_000),
          });
          await response.arrayBuffer();
          outcome.result = response.status;
        } catch (error) {
          outcome.result = String((error as Error & { cause?: Error }).cause ?? error);
          return;
        }
        if (outcome.sentAt > sigtermAt) return;
      }
    };
    const loops = Array.from({ length: 12 }, (_, n) => loop(n));
    await new Promise((resolve) => setTimeout(resolve, 1500));

    sigtermAt = performance.now();
    const inFlight = outcomes.filter((o) => o.result === 'pending').length;
    server.child.kill('SIGTERM');
    const exited = await Promise.race([
      server.exit,
      new Promise((resolve) =>
        setTimeout(
          () => resolve(`still running after 10 s: ${server.stdout().slice(-3000)}`),
          10_000,
        ),
      ),
    ]);
    assert.equal(exited, 0);
    await Promise.all(loops);

    assert.ok(inFlight > 0, 'requests were in flight when SIGTERM arrived');
    const settled = outcomes.filter((o) => o.sentAt < sigtermAt);
    assert.ok(settled.length > 100, `under load: ${settled.length} requests`);
    assert.deepEqual(
      settled.filter((o) => o.result !== 200),
      [],
      'every request sent before SIGTERM completed with 200',
    );
    // After the signal: a request on a kept-alive connection is answered in full (with
    // Connection: close; a connection idle at the signal is kept a moment for it, not closed
    // under it), and only a new connection is refused; never a reset, never a 5xx.
    for (const o of outcomes.filter((o) => o.sentAt >= sigtermAt)) {
      assert.ok(
        o.result === 200 || /ECONNREFUSED/.test(String(o.result)),
        `after SIGTERM: ${o.result}`,
      );
    }
    await assert.rejects(
      fetch(`${server.base}/me`, { headers }),
      (error: Error & { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED',
    );
  });
});

/** The node options and environment of the running process PID, as Linux shows them. */
function processSettings(pid: number) {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return {
    // node's own options: those before the script's path.
    options: cmdline.slice(
      1,
      cmdline.findIndex((arg, i) => i > 0 && !arg.startsWith('-')),
    ),
    arenas: environ.find((entry) => entry.startsWith('MALLOC_ARENA_MAX=')),
  };
}

/** Node 22.15 and later can replace a process in place; the service runs as started before. */
const CAN_RESTART = typeof process.execve === 'function';

describe('cdapi serve on a SQLite file not made yet', () => {
  it('makes it, folders and all, and warns once that it is new and empty; an existing one gets no warning', async (t) => {
    const path = join(useTempDir(t), 'typo', 'hr.db');
    const NEW_FILE =
      'made a new, empty SQLite database: check DATABASE_URL if an existing one was meant';
    const warned = (server: Served) =>
      server
        .logLines()
        .flatMap(({ level, msg, path }) => (msg === NEW_FILE ? [{ level, path }] : []));
    const made = await serve({ DATABASE_URL: `sqlite:${path}` });
    t.after(() => made.child.kill('SIGKILL'));
    await eventually(async () => warned(made).length > 0, 'the warning is logged');
    assert.deepEqual(warned(made), [{ level: 40, path }]);
    made.child.kill('SIGTERM');
    assert.equal(await made.exit, 0);
    const again = await serve({ DATABASE_URL: `sqlite:${path}` });
    t.after(() => again.child.kill('SIGKILL'));
    assert.equal((await fetch(`${again.origin}/readyz`)).status, 200);
    assert.deepEqual(warned(again), []);
  });
});

describe('cdapi serve shutting down with requests that never arrive whole', () => {
  it('answers them as while it ran, within its timeouts, and exits 0', async (t) => {
    const { path, adminPort, token, server } = await servedWithAdmin(t, 2000);
    /** A connection that sends `text` and no more, and all it receives until it is closed. */
    const halfSent = async (port: number, text: string) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      socket.write(text);
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk;
      });
      return { received: once(socket, 'close').then(() => received) };
    };
    const port = Number(new URL(server.origin).port);
    const connections = await Promise.all([
      halfSent(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n'),
      halfSent(port, ''),
      halfSent(adminPort, 'GET /admin/companies HTTP/1.1\r\nHost: x\r\n'),
      halfSent(
        adminPort,
        `POST /admin/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100\r\n\r\n{"type":`,
      ),
    ]);
    // The service has taken the connections and read what they sent before it is stopped.
    await sleep(500);
    server.child.kill('SIGTERM');
    // Before, the process waited for such clients for ever: server.close() stops Node's check
    // of the timeouts.
    const exited = await Promise.race([server.exit, sleep(20_000).then(() => 'still running')]);
    assert.equal(exited, 0);
    const [headersCut, silent, adminHeadersCut, bodyCut] = await Promise.all(
      connections.map(({ received }) => received),
    );
    for (const answer of [headersCut, silent, adminHeadersCut].map(String)) {
      assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.match(answer, /"code":"request_timeout"/);
    }
    // A body that stopped arriving gets no answer, as while running: its import rolled back.
    assert.equal(bodyCut, '');
    const cut = server.logLines().filter((line) => line.route === '/admin/import');
    assert.deepEqual(
      cut.map((line) => line.msg),
      ['request timed out: its body did not arrive in time'],
    );
    const companies = cdapiJson(['companies', 'list'], { DATABASE_URL: `sqlite:${path}` });
    assert.deepEqual(companies, []);
  });
});

describe('cdapi serve admin import the service reads more slowly than it arrives', () => {
  /** POSTs `body` to the admin import; it must import `records` with no timeout logged. */
  async function importsWhole(
    served: Awaited<ReturnType<typeof servedWithAdmin>>,
    body: Buffer | ReadableStream<Buffer>,
    records: number,
  ) {
    const answer = await fetch(`http://127.0.0.1:${served.adminPort}/admin/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${served.token}`, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    });
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(((await answer.json()) as { data: { records: number } }).data.records, records);
    assert.deepEqual(
      served.server.logLines().filter((line) => line.msg.startsWith('request timed out')),
      [],
    );
  }

  it('counts against HTTP_REQUEST_TIMEOUT_MS only the time its body keeps the service waiting', async (t) => {
    const served = await servedWithAdmin(t, 1000);
    // SQLite's write lock, held 3 s: the import waits for it (the busy timeout is 10 s) before
    // it reads a line, while its client has sent all it could.
    const writer = new Database(served.path);
    t.after(() => writer.close());
    writer.exec('BEGIN IMMEDIATE');
    const released = sleep(3000).then(() => writer.exec('ROLLBACK'));
    // 40 MiB of blank lines after the company: more than the sockets' buffers hold, so the
    // body is still arriving, at the pace the service reads it, when the timeout has passed.
    const body = Buffer.concat([
      ndjson([company(1)]),
      Buffer.from(`${' '.repeat(1023)}\n`.repeat(40 * 1024)),
    ]);
    await importsWhole(served, body, 1).finally(() => released);
  });

  it('does not cut an import read more slowly than it is sent, however long it takes', async (t) => {
    const served = await servedWithAdmin(t, 1000);
    // 200,000 employees (about 50 MB), sent chunked a hundred lines a chunk as a client
    // streaming an export does: the import reads them for several seconds, while the client
    // is held back by the connection, never by itself.
    async function* lines() {
      yield ndjson([company(1)]);
      for (let first = 1; first <= 200_000; first += 100) {
        yield ndjson(Array.from({ length: 100 }, (_, i) => employee(1, first + i)));
      }
    }
    await importsWhole(served, ReadableStream.from(lines()), 200_001);
  });
});

describe('cdapi serve memory settings', () => {
  it('runs with production’s semi-space size and malloc arenas however it is started', async (t) => {
    const server = await serve({ DATABASE_URL: (await useDatabase(t, 'sqlite')).url });
    t.after(() => server.child.kill('SIGKILL'));
    assert.ok(server.child.pid);
    assert.deepEqual(processSettings(server.child.pid), {
      options: CAN_RESTART ? SERVICE_NODE_OPTIONS : [],
      arenas: CAN_RESTART ? `MALLOC_ARENA_MAX=${SERVICE_ENV.MALLOC_ARENA_MAX}` : undefined,
    });
    assert.equal(server.stderr().includes('could not restart'), false, server.stderr());
  });

  it('keeps the values the operator gives', async (t) => {
    const server = await serve({
      DATABASE_URL: (await useDatabase(t, 'sqlite')).url,
      NODE_OPTIONS: '--max-semi-space-size=16',
      MALLOC_ARENA_MAX: '4',
    });
    t.after(() => server.child.kill('SIGKILL'));
    assert.ok(server.child.pid);
    assert.deepEqual(processSettings(server.child.pid), {
      options: [],
      arenas: 'MALLOC_ARENA_MAX=4',
    });
    const mixed = await serve({
      DATABASE_URL: (await useDatabase(t, 'sqlite')).url,
      MALLOC_ARENA_MAX: '8',
    });
    t.after(() => mixed.child.kill('SIGKILL'));
    assert.ok(mixed.child.pid);
    assert.deepEqual(processSettings(mixed.child.pid), {
      options: CAN_RESTART ? SERVICE_NODE_OPTIONS : [],
      arenas: 'MALLOC_ARENA_MAX=8',
    });
  });

  it('never loads the image library: only a receipt an import processes needs it, and the admin API’s imports take none', async (t) => {
    const adminEnv = {
      ADMIN_PORT: String(await freePort()),
      ADMIN_TOKEN: 'image-library-admin-token-0123456789abcdef',
    };
    const { server, headers } = await servedCompany(t, 'sqlite', { extraEnv: adminEnv });
    assert.equal((await fetch(`${server.base}/expenses`, { headers })).status, 200);
    assert.ok(server.child.pid);
    const maps = readFileSync(`/proc/${server.child.pid}/maps`, 'utf8');
    assert.equal(maps.includes('libvips'), false, 'libvips is mapped into the service');
  });

  it('runs as started when it has an IPC channel to its parent, which would not survive', async (t) => {
    const server = await serve(
      { DATABASE_URL: (await useDatabase(t, 'sqlite')).url },
      { ipc: true },
    );
    t.after(() => server.child.kill('SIGKILL'));
    assert.ok(server.child.pid);
    assert.deepEqual(processSettings(server.child.pid), { options: [], arenas: undefined });
    assert.equal(server.child.connected, true);
  });
});

describe('npm start', () => {
  it('stops the service when npm alone is sent SIGTERM, as a script that started it would', async (t) => {
    const dir = useTempDir(t);
    const port = await freePort();
    // npm runs a script through `sh -c`, which a signal ends without passing it on: the
    // script `exec`s the service, so npm's signal reaches it.
    const npm = process.env.npm_execpath;
    const child = spawn(
      npm ? process.execPath : 'npm',
      [...(npm ? [npm] : []), 'start', '--', '--port', String(port)],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          DATABASE_URL: `sqlite:${join(dir, 'start.db')}`,
        },
        stdio: 'pipe',
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      out += chunk;
    });
    const exited = once(child, 'exit');
    t.after(() => child.kill('SIGKILL'));
    const origin = `http://127.0.0.1:${port}`;
    await eventually(async () => out.includes('listening on'), `npm start: ${out}`, 60_000);
    assert.equal((await fetch(`${origin}/healthz`)).status, 200);
    child.kill('SIGTERM');
    await exited;
    await eventually(
      () =>
        fetch(`${origin}/healthz`).then(
          () => false,
          (error: Error & { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED',
        ),
      `the service stops with npm: ${out}`,
    );
    assert.match(out, /"msg":"shut down"/);
  });
});
