import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_PREFIX } from '../../src/http/deps.ts';
import { MAX_WAITING_REQUESTS } from '../../src/http/in-turn.ts';
import { useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenApi } from '../helpers/listen.ts';
import { smallCompany } from '../helpers/records.ts';

describeEachDialect('pipelined requests', (dialect) => {
  it('are handled one at a time, each once the answer before it is written, and answered in order', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    let handled = 0;
    let letFirstGo: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      letFirstGo = resolve;
    });
    api.app.addHook('onRequest', async (request) => {
      handled++;
      if (request.headers['x-request-id'] === 'p0') await firstHeld;
    });
    const base = new URL(await listenApi(api));
    const paths = ['/me', '/employees', '/employees/1', '/leave-types', '/nope', '/expenses'];
    const requests = Array.from({ length: 30 }, (_, i) => {
      const method = i % 7 === 3 ? 'HEAD' : 'GET';
      const last = i === 29 ? 'Connection: close\r\n' : '';
      return (
        `${method} ${API_PREFIX}${paths[i % paths.length]} HTTP/1.1\r\nHost: ${base.host}\r\n` +
        `Authorization: Bearer ${key}\r\nX-Request-Id: p${i}\r\n${last}\r\n`
      );
    });
    const socket = connect(Number(base.port), '127.0.0.1');
    await once(socket, 'connect');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // All thirty in one packet: Node's parser hands every one of them over at once.
    socket.write(requests.join(''));
    await eventually(async () => handled >= 1, 'the first request is handled');
    await sleep(200);
    assert.equal(handled, 1, 'the others wait for the first answer');
    letFirstGo();
    await once(socket, 'end');
    assert.equal(handled, 30);
    const answers = Buffer.concat(received).toString('latin1');
    assert.deepEqual(
      [...answers.matchAll(/^x-request-id: (\S+)\r$/gim)].map((match) => match[1]),
      requests.map((_, i) => `p${i}`),
    );
    assert.equal(answers.match(/HTTP\/1\.1 \d{3} /g)?.length, 30);
  });

  it('give no request of another connection a 503: one connection takes one place at a time', async (t) => {
    const api = await useApi(t, dialect, {
      records: smallCompany(1, 0),
      config: { maxConcurrentRequests: 2, maxQueuedRequests: 0 },
    });
    const key = await api.createKey(1);
    const base = new URL(await listenApi(api));
    const socket = connect(Number(base.port), '127.0.0.1');
    await once(socket, 'connect');
    let answers = '';
    socket.on('data', (chunk: Buffer) => {
      answers += chunk.toString('latin1');
    });
    const request = `GET ${API_PREFIX}/leaves HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    socket.write(request.repeat(50));
    const other = await fetch(`${base.origin}${API_PREFIX}/employees`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(other.status, 200);
    await eventually(async () => answers.match(/HTTP\/1\.1 /g)?.length === 50, 'fifty answers');
    assert.deepEqual(new Set(answers.match(/HTTP\/1\.1 \d+/g)), new Set(['HTTP/1.1 200']));
    socket.destroy();
  });

  it('close a connection with more than a thousand waiting, and read no more meanwhile', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    let handled = 0;
    let letFirstGo: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      letFirstGo = resolve;
    });
    api.app.addHook('onRequest', async () => {
      handled++;
      if (handled === 1) await firstHeld;
    });
    const base = new URL(await listenApi(api));
    const socket = connect(Number(base.port), '127.0.0.1');
    await once(socket, 'connect');
    socket.on('data', () => {});
    // 1,101 requests of 28 bytes in one write: one read of the service's.
    socket.write(`GET / HTTP/1.1\r\nHost: a\r\n\r\n`.repeat(MAX_WAITING_REQUESTS + 101));
    await eventually(async () => socket.destroyed, 'the service closed the connection');
    letFirstGo();
    assert.equal(handled, 1);
    const me = await fetch(`${base.origin}/healthz`);
    assert.equal(me.status, 200);
  });

  it('are dropped once an answer before them closes the connection (a shutdown)', async (t) => {
    const api = await useApi(t, dialect, { records: smallCompany(1, 0) });
    const key = await api.createKey(1);
    let handled = 0;
    let letFirstGo: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      letFirstGo = resolve;
    });
    api.app.addHook('onRequest', async () => {
      handled++;
      if (handled === 1) await firstHeld;
    });
    const base = new URL(await listenApi(api));
    const socket = connect(Number(base.port), '127.0.0.1');
    await once(socket, 'connect');
    let answers = '';
    socket.on('data', (chunk: Buffer) => {
      answers += chunk.toString('latin1');
    });
    const request = `GET ${API_PREFIX}/me HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    socket.write(request.repeat(4));
    await eventually(async () => handled === 1, 'the first request is handled');
    // Once the listener is closed, its hooks answer with `Connection: close`.
    const closing = api.app.close();
    await eventually(async () => !api.app.server.listening, 'the listener is closed');
    letFirstGo();
    await once(socket, 'close');
    await closing;
    assert.equal(answers.match(/HTTP\/1\.1 \d+/g)?.length, 1);
    assert.match(answers, /\r\nconnection: close\r\n/i);
    assert.equal(handled, 1, 'the requests after it are not handled');
  });
});
