import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { it, type TestContext } from 'node:test';
import type { Dialect } from '../../src/db/connect.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { PROBLEM_CONTENT_TYPE } from '../../src/schemas/problems.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { smallCompany } from '../helpers/records.ts';

/**
 * The server's timeouts against clients that are slow on purpose (slowloris) or gone quiet.
 * Short timeouts are configured so the test is quick; the bounds only catch a connection the
 * server never closes, they do not measure speed.
 */

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
/** Far beyond every timeout above plus Node's one-second check: only a hang exceeds it. */
const BOUND_MS = 8000;

async function listening(
  t: TestContext,
  dialect: Dialect,
  keepAliveTimeoutMs = KEEP_ALIVE_TIMEOUT_MS,
) {
  const api = await useApi(t, dialect, {
    records: smallCompany(1, 0),
    config: {
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs,
    },
  });
  const key = await api.createKey(1);
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  return { key, port: (api.app.server.address() as AddressInfo).port };
}

/**
 * Everything the server sends until it closes the connection, and when it closed it. A reset
 * (ECONNRESET: the server closed with our bytes unread while we were writing) is a close too;
 * `once(socket, 'close')` would reject on that error instead.
 */
async function untilClosed(socket: Socket): Promise<{ received: string; elapsedMs: number }> {
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk;
  });
  socket.on('error', () => {});
  const timer = setTimeout(() => socket.destroy(new Error('still open')), BOUND_MS);
  await new Promise((resolve) => socket.once('close', resolve));
  clearTimeout(timer);
  return { received, elapsedMs: Date.now() - started };
}

/** Calls `write` every 100 ms while the socket is open; stops with it. */
function dripInto(socket: Socket, write: () => void): void {
  const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : write()), 100);
  socket.once('close', () => clearInterval(drip));
}

describeEachDialect('slow clients', (dialect) => {
  it('answers 408 problem+json to headers that trickle in, and closes the connection', async (t) => {
    const { key, port } = await listening(t, dialect);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const request = `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`;
    let sent = 0;
    // One byte every 100 ms: the headers would take far longer than the timeout to complete.
    dripInto(socket, () => {
      if (sent < request.length) socket.write(request[sent++] ?? '');
    });
    const { received, elapsedMs } = await untilClosed(socket);
    assert.ok(elapsedMs < BOUND_MS, 'the server closed the connection');
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(received.includes(`Content-Type: ${PROBLEM_CONTENT_TYPE}`), received);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
    assert.equal(body.status, 408);
    assert.equal(body.code, 'request_timeout');
    assert.equal(body.title, 'Request timeout');
    assert.ok(sent < request.length, 'the request never completed');
  });

  it('closes a connection whose body trickles in past the request timeout', async (t) => {
    const { key, port } = await listening(t, dialect);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    // The answer (405) comes at once; the connection stays open only while the body may still
    // arrive in time.
    dripInto(socket, () => socket.write(' '));
    const { received, elapsedMs } = await untilClosed(socket);
    assert.match(received, /^HTTP\/1\.1 405 /);
    assert.ok(elapsedMs >= REQUEST_TIMEOUT_MS - 100, 'open until the request timeout');
    assert.ok(elapsedMs < BOUND_MS, 'then closed');
  });

  it('closes a connection that never sends a byte', async (t) => {
    const { port } = await listening(t, dialect);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const { elapsedMs } = await untilClosed(socket);
    assert.ok(elapsedMs < BOUND_MS, 'the server closed the connection');
  });

  it('closes an idle keep-alive connection after answering', async (t) => {
    const { key, port } = await listening(t, dialect);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const closed = untilClosed(socket);
    socket.write(
      `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    );
    const { received, elapsedMs } = await closed;
    assert.match(received, /^HTTP\/1\.1 200 /);
    assert.match(received, /Keep-Alive: timeout=1/i);
    assert.ok(elapsedMs >= KEEP_ALIVE_TIMEOUT_MS - 100, 'kept alive for the timeout first');
    assert.ok(elapsedMs < BOUND_MS, 'then closed');
  });

  it('announces half the keep-alive timeout it enforces', async (t) => {
    const { key, port } = await listening(t, dialect, 8000);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const closed = untilClosed(socket);
    const request = `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    socket.write(request);
    // A client reusing the connection past the announced 4 s still finds it open.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    socket.write(request.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
    const { received } = await closed;
    const answers = received.match(/HTTP\/1\.1 200 /g) ?? [];
    assert.equal(answers.length, 2, received);
    assert.match(received, /Keep-Alive: timeout=4\r\n/i);
  });
});
