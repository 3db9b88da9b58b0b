import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { ApiError, createClient, type Wait } from '../../client/src/index.ts';
import { useApi } from '../helpers/api.ts';
import { countStatuses, listenApi } from '../helpers/listen.ts';
import { smallCompany } from '../helpers/records.ts';
import { freePort } from '../helpers/serve.ts';

/** A served company whose key allows `perMinute` requests a minute; counts the answers. */
async function limitedApi(t: TestContext, perMinute: number) {
  const api = await useApi(t, 'sqlite', { records: smallCompany(1, 0) });
  const statuses = countStatuses(api);
  const base = await listenApi(api);
  const apiKey = await api.createKey(1, { perMinute });
  const waits: Wait[] = [];
  const client = createClient({ baseUrl: base, apiKey, onWait: (wait) => waits.push(wait) });
  return { statuses, waits, client };
}

/**
 * A TCP server that reads requests and never answers (or answers as `onData` says); counts the
 * requests.
 */
async function silentServer(
  t: TestContext,
  onData: (socket: Socket, chunk: Buffer) => void = () => {},
) {
  const sockets: Socket[] = [];
  let requests = 0;
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('data', (chunk) => {
      requests += chunk.toString('latin1').split('GET /').length - 1;
      onData(socket, chunk);
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return { base: `http://127.0.0.1:${port}/api/company/v1`, requests: () => requests };
}

describe('client: rate limits', { concurrency: true }, () => {
  it('rides out a 429 storm: every call succeeds after waiting Retry-After', async (t) => {
    const { statuses, waits, client } = await limitedApi(t, 3);
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.me()));
    assert.deepEqual(
      answers.map((me) => me.company.id),
      [1, 1, 1, 1, 1, 1],
    );
    assert.equal(statuses.get(200), 6);
    assert.ok((statuses.get(429) ?? 0) >= 3, 'the burst was answered 429 before it was retried');
    const retries = waits.filter((wait) => wait.reason === 'retry');
    assert.equal(retries.length, statuses.get(429));
    assert.ok(retries.every((wait) => wait.status === 429 && wait.ms >= 1000));
  });

  it('paces itself by the RateLimit header: sequential calls past the limit get no 429', async (t) => {
    const { statuses, waits, client } = await limitedApi(t, 2);
    for (let i = 0; i < 4; i++) assert.equal((await client.employees.list()).meta.total, 1);
    assert.equal(statuses.get(200), 4);
    assert.equal(statuses.get(429), undefined);
    assert.ok(
      waits.some((wait) => wait.reason === 'rate_limit' && wait.ms > 1000),
      'it waited for a slot',
    );
  });
});

describe('client: network failures, timeouts and cancellation', () => {
  it('retries an attempt that times out, then throws the TimeoutError after maxRetries', async (t) => {
    const silent = await silentServer(t);
    const client = createClient({
      baseUrl: silent.base,
      apiKey: 'k',
      maxRetries: 2,
      timeoutMs: 200,
    });
    await assert.rejects(client.me(), { name: 'TimeoutError' });
    assert.equal(silent.requests(), 3, 'one attempt and two retries');
  });

  it('retries an answer whose body is cut short or stops arriving, as a failed attempt', async (t) => {
    const me = JSON.stringify({ data: { ok: true } });
    const attempts: string[] = [];
    const { base } = await silentServer(t, (socket) => {
      const kind = ['cut', 'stalled', 'whole'][attempts.length % 3] as string;
      attempts.push(kind);
      const head = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${me.length}\r\n\r\n`;
      if (kind === 'whole') socket.end(head + me);
      else {
        socket.write(head + me.slice(0, 5));
        if (kind === 'cut') socket.destroy();
      }
    });
    const waits: Wait[] = [];
    const client = createClient({
      baseUrl: base,
      apiKey: 'k',
      timeoutMs: 300,
      onWait: (wait) => waits.push(wait),
    });
    assert.deepEqual(await client.me(), { data: { ok: true } });
    assert.deepEqual(attempts, ['cut', 'stalled', 'whole']);
    assert.deepEqual(
      waits.map((wait) => [wait.reason, wait.attempt]),
      [
        ['retry', 1],
        ['retry', 2],
      ],
    );
    // Each wait names what failed: the body cut short, then no whole answer in time.
    assert.equal(waits[0]?.failure, 'the answer arrived cut short');
    assert.equal(waits[1]?.failure, 'no whole answer within 0.3 s');
  });

  it('refuses a key that a header cannot carry without showing it, and trims one that ends a line', async () => {
    const baseUrl = 'http://127.0.0.1:1/api/company/v1';
    for (const apiKey of ['cdk_secret\n# comment', 'cdk_se cret', 'cdk_secr\u00e9t']) {
      assert.throws(
        () => createClient({ baseUrl, apiKey }),
        (error: Error) =>
          error instanceof TypeError &&
          /an HTTP header cannot carry/.test(error.message) &&
          !error.message.includes('secret'),
      );
    }
    assert.ok(createClient({ baseUrl, apiKey: 'cdk_secret\r\n' }));
  });

  it('says a key is required, and refuses a base URL that is not http(s) or holds a password, showing neither', () => {
    const baseUrl = 'http://127.0.0.1:1/api/company/v1';
    for (const apiKey of [undefined, '', '  \n']) {
      assert.throws(
        () => createClient({ baseUrl, apiKey: apiKey as string }),
        /^TypeError: apiKey is required/,
      );
    }
    for (const [url, reason] of [
      [
        '127.0.0.1:8080/api/company/v1',
        /^TypeError: baseUrl must be an http:\/\/ or https:\/\/ URL/,
      ],
      ['ftp://127.0.0.1/api', /^TypeError: baseUrl must be an http:\/\/ or https:\/\/ URL/],
      [
        'http://user:s3cret@127.0.0.1:1/api/company/v1',
        /^TypeError: baseUrl must not hold a user name or password/,
      ],
      [
        'http://127.0.0.1:1/api/company/v1/?x=1',
        /^TypeError: baseUrl must not hold a query \(\?\) or a fragment \(#\)/,
      ],
      [
        'http://127.0.0.1:1/api/company/v1#top',
        /^TypeError: baseUrl must not hold a query \(\?\) or a fragment \(#\)/,
      ],
    ] as const) {
      assert.throws(
        () => createClient({ baseUrl: url, apiKey: 'cdk_x' }),
        (error: Error) => reason.test(String(error)) && !String(error).includes('s3cret'),
      );
    }
  });

  it('refuses a maxRetries or a timeoutMs that is not a whole number in range', async () => {
    const baseUrl = 'http://127.0.0.1:1/api/company/v1';
    for (const maxRetries of [Number.NaN, -1, 1.5, 101, '3']) {
      assert.throws(
        () => createClient({ baseUrl, apiKey: 'k', maxRetries: maxRetries as number }),
        /^TypeError: maxRetries must be a whole number from 0 to 100/,
        String(maxRetries),
      );
    }
    for (const timeoutMs of [0, -5, Number.POSITIVE_INFINITY, 2 ** 31, '1000', 0.5]) {
      assert.throws(
        () => createClient({ baseUrl, apiKey: 'k', timeoutMs: timeoutMs as number }),
        /^TypeError: timeoutMs must be a whole number of milliseconds from 1 to 2147483647/,
        String(timeoutMs),
      );
    }
    const client = createClient({ baseUrl, apiKey: 'k', maxRetries: 0, timeoutMs: 2 ** 31 - 1 });
    await assert.rejects(client.me({ timeoutMs: -1 }), /^TypeError: timeoutMs must be/);
  });

  it('throws at once a 429 or 503 whose Retry-After is longer than an hour, and a port fetch refuses', async (t) => {
    const problem = JSON.stringify({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      code: 'rate_limited',
      detail: 'later',
    });
    const silent = await silentServer(t, (socket) => {
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3000000\r\nContent-Type: application/problem+json\r\nContent-Length: ${problem.length}\r\n\r\n${problem}`,
      );
    });
    const waits: Wait[] = [];
    const client = createClient({
      baseUrl: silent.base,
      apiKey: 'k',
      onWait: (w) => waits.push(w),
    });
    const error = await client.me().catch((e: unknown) => e);
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.status, 429);
    assert.equal(
      error.detail,
      'later (not retried: its Retry-After asks for 3000000 s, more than the hour within which every window frees)',
    );
    assert.equal(silent.requests(), 1, 'not retried');
    assert.equal(waits.length, 0);

    // Port 6000 (X11) is one fetch never connects to: nothing to retry.
    const blocked = createClient({
      baseUrl: 'http://127.0.0.1:6000/api/company/v1',
      apiKey: 'k',
      onWait: (w) => waits.push(w),
    });
    await assert.rejects(
      blocked.me(),
      (e: Error) => e.message === 'fetch failed' && (e.cause as Error).message === 'bad port',
    );
    assert.equal(waits.length, 0);
  });

  it('takes a per-call timeout', async (t) => {
    const silent = await silentServer(t);
    const client = createClient({ baseUrl: silent.base, apiKey: 'k', maxRetries: 0 });
    await assert.rejects(client.employees.list({}, { timeoutMs: 100 }), { name: 'TimeoutError' });
    assert.equal(silent.requests(), 1);
  });

  it('retries a refused connection, then throws the network error', async () => {
    const base = `http://127.0.0.1:${await freePort()}/api/company/v1`;
    const client = createClient({ baseUrl: base, apiKey: 'k', maxRetries: 2 });
    await assert.rejects(client.me(), { name: 'TypeError', message: 'fetch failed' });
  });

  it('stops at once, without retrying, when the caller’s signal aborts', async (t) => {
    const silent = await silentServer(t);
    const client = createClient({ baseUrl: silent.base, apiKey: 'k', timeoutMs: 60_000 });
    const controller = new AbortController();
    const call = client.leaves.list({}, { signal: controller.signal });
    while (silent.requests() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await assert.rejects(call, { name: 'AbortError' });
    assert.equal(silent.requests(), 1);
    await assert.rejects(client.me({ signal: controller.signal }), { name: 'AbortError' });
    assert.equal(silent.requests(), 1, 'an aborted signal sends nothing');
  });

  it('rejects an id that is not a positive integer before sending anything', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1/api/company/v1', apiKey: 'k' });
    await assert.rejects(client.employees.get(1.5), TypeError);
    await assert.rejects(client.leaves.get(0), TypeError);
  });

  it('is an ApiError with the status of a failure that retrying cannot fix', async (t) => {
    const { client } = await limitedApi(t, 100);
    const error = await client.expenses.get(99).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 404);
  });
});
