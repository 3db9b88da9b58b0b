import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import Fastify, { type FastifyReply } from 'fastify';
import { Admission } from '../../src/http/admission.ts';
import { ApiError } from '../../src/http/errors.ts';
import { admission } from '../../src/http/plugins/admission.ts';

/** A reply whose response the test ends (or the client cuts off) by emitting 'close'. */
function reply() {
  const raw = new EventEmitter();
  return { reply: { raw } as unknown as FastifyReply, close: () => raw.emit('close') };
}

const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => {
      state = 'admitted';
    },
    (error: unknown) => {
      state =
        error instanceof ApiError ? `${error.status} ${error.headers['retry-after']}` : 'gave up';
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('admission', () => {
  it('admits up to its limit at once and the next in arrival order as each ends', async () => {
    const admission = new Admission(2, 10, 60_000);
    const [a, b, c, d] = [reply(), reply(), reply(), reply()];
    assert.equal(await settled(admission.enter(a.reply)), 'admitted');
    assert.equal(await settled(admission.enter(b.reply)), 'admitted');
    const third = admission.enter(c.reply);
    const fourth = admission.enter(d.reply);
    assert.equal(await settled(third), 'pending');
    b.close();
    assert.equal(await settled(third), 'admitted');
    assert.equal(await settled(fourth), 'pending');
    a.close();
    assert.equal(await settled(fourth), 'admitted');
  });

  it('answers 503 with Retry-After at once when the queue is full', async () => {
    const admission = new Admission(1, 1, 60_000);
    const [a, b, c] = [reply(), reply(), reply()];
    await admission.enter(a.reply);
    const waiting = admission.enter(b.reply);
    assert.equal(await settled(admission.enter(c.reply)), '503 1');
    a.close();
    assert.equal(await settled(waiting), 'admitted');
  });

  it('answers 503 to a request that waited its longest', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const admission = new Admission(1, 10, 1000);
    const [a, b] = [reply(), reply()];
    await admission.enter(a.reply);
    const waiting = admission.enter(b.reply);
    t.mock.timers.tick(999);
    assert.equal(await settled(waiting), 'pending');
    t.mock.timers.tick(1);
    assert.equal(await settled(waiting), '503 1');
  });

  it('gives the place of a client that hangs up while waiting to the next one', async () => {
    const admission = new Admission(1, 10, 60_000);
    const [a, b, c] = [reply(), reply(), reply()];
    await admission.enter(a.reply);
    const gone = admission.enter(b.reply);
    const next = admission.enter(c.reply);
    b.close();
    assert.equal(await settled(gone), 'gave up');
    a.close();
    assert.equal(await settled(next), 'admitted');
  });

  it('gives a request’s place away once its answer is made, before the client has read it', async (t) => {
    const app = Fastify();
    t.after(() => app.close());
    await app.register(admission, { admission: new Admission(1, 0, 60_000) });
    let during: number | undefined;
    app.get('/', {
      // A hook of the route's own runs after the plugin's: the answer is made, not yet sent.
      onSend: async (request, _reply, payload) => {
        if (request.headers['x-first']) during = (await app.inject('/')).statusCode;
        return payload;
      },
      handler: async () => 'ok',
    });
    const first = await app.inject({ url: '/', headers: { 'x-first': '1' } });
    assert.equal(first.statusCode, 200);
    assert.equal(during, 200, 'the only place was free again');
  });
});
