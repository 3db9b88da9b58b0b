import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeGracefully } from '../../src/http/closing.ts';

/**
 * A listener whose one answer, ended at once, is larger than the system buffers of a connection
 * whose client reads nothing hold (the rest waits in the listener's socket), and a connection
 * that asked for it, read its first bytes and stopped reading; then the listener is closed.
 */
async function slowReaderAtClose(t: TestContext, requestTimeoutMs: number) {
  const body = Buffer.alloc(16 * 1024 * 1024, 'x');
  const server = createServer((_request, response) => {
    response.setHeader('content-length', body.length);
    response.end(body);
  });
  const connections = closeGracefully(server, { headersTimeoutMs: 1000, requestTimeoutMs });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.closeAllConnections());
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'data');
  socket.pause();
  const closed = connections.during(new Promise((resolve) => server.close(resolve)));
  return {
    socket,
    closed,
    /** The answer's body as received, and whatever came after it. */
    received() {
      const all = Buffer.concat(chunks);
      return all.subarray(all.indexOf('\r\n\r\n') + 4);
    },
    body,
  };
}

describe('closing a listener gracefully', () => {
  it('keeps a connection past the idle grace until the answer written before has left', async (t) => {
    const reader = await slowReaderAtClose(t, 30_000);
    // Past the 2 s kept for connections idle between two requests, and the headers timeout:
    // Node counts this one idle once its answer has ended, and closing it then cut the answer.
    await sleep(3000);
    reader.socket.resume();
    await once(reader.socket, 'close');
    await reader.closed;
    // All of it, and nothing after it (no 408 for a request never sent).
    assert.ok(reader.received().equals(reader.body), `${reader.received().length} bytes`);
  });

  it('closes it once the request timeout has passed since the close, if its client reads nothing', async (t) => {
    const reader = await slowReaderAtClose(t, 2500);
    await reader.closed;
    // What the system had taken arrives; the rest was dropped with the connection.
    reader.socket.resume();
    await once(reader.socket, 'close');
    assert.ok(reader.received().length < reader.body.length);
  });
});
