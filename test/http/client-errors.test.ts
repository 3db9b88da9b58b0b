import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  answerClientErrors,
  noteLatestResponse,
  readOnlyRefusal,
} from '../../src/http/client-errors.ts';
import { API_PREFIX } from '../../src/http/deps.ts';
import { useApi } from '../helpers/api.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenApi } from '../helpers/listen.ts';
import { rawRequest, statusesIn } from '../helpers/raw-http.ts';

/** A connection's two ends over loopback: the server's socket and the client's. */
async function socketPair(): Promise<{ server: Socket; client: Socket; close(): void }> {
  const listener = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  const [server] = (await once(listener, 'connection')) as [Socket];
  return {
    server,
    client,
    close: () => {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

describe('client errors', () => {
  it('answers a connection once, after the answer under way, however often the parser reports the error again', async (t) => {
    const { app } = await useApi(t, 'sqlite');
    const { server, client, close } = await socketPair();
    t.after(close);
    const received: Buffer[] = [];
    client.on('data', (chunk) => received.push(chunk));
    // An earlier pipelined request's answer, still being written.
    const underWay = Object.assign(new EventEmitter(), { writableFinished: false });
    noteLatestResponse(server, underWay as unknown as ServerResponse);
    const answer = answerClientErrors(readOnlyRefusal);
    // Node's parser reports the error for the bad request, then again for each later chunk.
    for (let chunk = 0; chunk < 15; chunk++) {
      const error = Object.assign(new Error('Invalid method encountered'), {
        code: 'HPE_INVALID_METHOD',
        rawPacket: Buffer.from(`FOO ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\n\r\n`),
        bytesParsed: 1,
      });
      answer.call(app, error, server);
    }
    assert.equal(underWay.listenerCount('close'), 1);
    assert.equal(received.length, 0, 'nothing is written before the answer under way');
    underWay.emit('close');
    await once(client, 'close');
    const text = Buffer.concat(received).toString('latin1');
    assert.deepEqual(statusesIn(text), ['405'], text);
    assert.match(text, /\r\nAllow: GET, HEAD\r\n/);
  });
  it('logs each request the parser refuses as a request line carrying the id its answer carries', async (t) => {
    const api = await useApi(t, 'sqlite');
    await listenApi(api);
    const { port } = api.app.server.address() as AddressInfo;
    const requests: Array<[string | Buffer, number]> = [
      [
        `FOO ${API_PREFIX}/employees HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer cdk_secret\r\n\r\n`,
        405,
      ],
      [
        Buffer.from(
          `GET ${API_PREFIX}/employees?search=stra\xc3\x9fe HTTP/1.1\r\nHost: x\r\n\r\n`,
          'latin1',
        ),
        400,
      ],
      [`GET ${API_PREFIX}/employees?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    ];
    for (const [request, status] of requests) {
      const answer = await rawRequest(port, request);
      assert.equal(answer?.status, status);
      const id = answer?.headers['x-request-id'];
      const line = api.logLines().find((entry) => entry.reqId === id);
      assert.ok(line, `a log line for ${status}`);
      assert.equal(line.status, status);
      assert.equal(line.level, 30, 'at info, as every request line');
      assert.equal(line.msg, 'request');
    }
    assert.ok(!JSON.stringify(api.logLines()).includes('cdk_secret'), 'no header is logged');
    // A body that stops being HTTP half way: refused in place of its route's answer, with the
    // request's own id, and the request's own line says so.
    const cut = await rawRequest(
      port,
      `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: x\r\nX-Request-Id: broken-body\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n`,
    );
    assert.equal(cut?.status, 400);
    assert.equal(cut.headers['x-request-id'], 'broken-body');
    await eventually(
      async () => api.logLines().some((line) => line.reqId === 'broken-body'),
      'the refused request’s line',
    );
    assert.deepEqual(
      api
        .logLines()
        .filter((line) => line.reqId === 'broken-body')
        .map((line) => [line.msg, line.status]),
      [['request refused: its body was cut short or not valid HTTP', 400]],
    );
    assert.ok(!api.logLines().some((line) => line.code === 'HPE_INVALID_CHUNK_SIZE'));
    // A request answered before its body broke (no route reads a GET's body) gets no other
    // answer: the connection closes.
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const closed = once(socket, 'close');
    socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
    await eventually(async () => statusesIn(received).length === 1, 'the answer');
    socket.write('zz\r\n');
    await closed;
    assert.deepEqual(statusesIn(received), ['200'], received);
  });
});
