import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { ApiError, createClient, ReceiptError, type Wait } from '../../client/src/index.ts';
import { type KeyOptions, useApi } from '../helpers/api.ts';
import { listenApi } from '../helpers/listen.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeJpeg,
} from '../helpers/records.ts';

const EMPLOYEES = 250;
const LEAVES = 310;

/** A company with hundreds of records, one expense with a receipt, and a second company. */
async function bigCompany(t: TestContext) {
  const api = await useApi(t, 'sqlite');
  await writeJpeg(api.dir, 'photo.jpg', 300, 200);
  const records: unknown[] = [company(1), leaveType(1, 1), leaveType(1, 2), category(1, 1)];
  for (let id = 1; id <= EMPLOYEES; id++)
    records.push(employee(1, id, { status: id % 10 === 0 ? 'terminated' : 'active' }));
  for (let id = 1; id <= LEAVES; id++)
    records.push(
      leave(1, id, (id % EMPLOYEES) + 1, (id % 2) + 1, {
        status: id % 3 === 0 ? 'pending' : 'approved',
      }),
    );
  records.push(
    expense(1, 1, 1, 1, { receipt: { original: 'photo.jpg' } }),
    expense(1, 2, 1, 1),
    company(2),
    employee(2, 1000),
  );
  await api.load(records);
  const encodings: string[] = [];
  api.app.addHook('onResponse', async (_request, reply) => {
    encodings.push(String(reply.getHeader('content-encoding') ?? 'identity'));
  });
  const base = await listenApi(api);
  const apiKey = await api.createKey(1);
  const client = createClient({ baseUrl: base, apiKey });
  return { api, client, base, apiKey, encodings };
}

/**
 * What stands between the client and a signed URL, for the next `times` fetches of it: a
 * captive portal's page, the first half of the file ended cleanly (its Content-Length made to
 * fit), the whole file gzip-encoded (as a proxy may), a 304 no one asked for, or a redirect
 * to itself.
 */
type SignedFault = { kind: 'page' | 'half' | 'gzip' | 'unasked304' | 'loop'; times: number };

/** One expense with a receipt; signed URLs valid 1 s. */
async function receiptSetup(t: TestContext) {
  const api = await useApi(t, 'sqlite', { config: { signedUrlTtlSeconds: 1 } });
  await writeJpeg(api.dir, 'photo.jpg', 300, 200);
  await api.load([
    company(1),
    employee(1, 1),
    category(1, 1),
    expense(1, 1, 1, 1, { receipt: { original: 'photo.jpg' } }),
  ]);
  // Signed fetches, counted; the first `late` of them arrive after their link expired.
  const signed = { fetches: 0, late: 0, fault: null as SignedFault | null, meMoved: false };
  const faulty = (url: string) =>
    url.includes('/receipt-files/') && signed.fault !== null && signed.fault.times > 0;
  api.app.addHook('onRequest', async (request, reply) => {
    // A misconfigured proxy's answer to the API itself.
    if (signed.meMoved && request.url.endsWith('/me')) {
      return reply.redirect('http://127.0.0.1:9/captured', 307);
    }
    if (!request.url.includes('/receipt-files/')) return;
    signed.fetches += 1;
    if (signed.fetches <= signed.late) await sleep(2100);
    if (faulty(request.url) && signed.fault?.kind === 'loop') {
      (signed.fault as SignedFault).times -= 1;
      return reply.redirect(request.url, 302);
    }
  });
  api.app.addHook('onSend', async (request, reply, payload) => {
    if (!faulty(request.url) || reply.statusCode !== 200) return payload;
    const fault = signed.fault as SignedFault;
    fault.times -= 1;
    // The answers that replace the file's bytes close its stream: left to itself it could still
    // be opening the file when the test removed its folder (an unhandled ENOENT, once, in CI's
    // Node 22 pass).
    const discard = () => {
      const file = payload as Readable;
      file.on('error', () => {});
      file.destroy();
    };
    if (fault.kind === 'unasked304') {
      discard();
      reply.code(304).removeHeader('content-length');
      return '';
    }
    if (fault.kind === 'page') {
      discard();
      reply.header('content-type', 'text/html; charset=utf-8').removeHeader('content-length');
      return '<html><body>Sign in to the guest Wi-Fi</body></html>';
    }
    const chunks: Buffer[] = [];
    for await (const chunk of payload as AsyncIterable<Buffer>) chunks.push(chunk);
    const whole = Buffer.concat(chunks);
    if (fault.kind === 'gzip') {
      const encoded = gzipSync(whole);
      reply.header('content-encoding', 'gzip').header('content-length', String(encoded.length));
      return encoded;
    }
    const half = whole.subarray(0, Math.floor(whole.length / 2));
    reply.header('content-length', String(half.length));
    return half;
  });
  const base = await listenApi(api);
  const receiptClient = async (
    key: KeyOptions = {},
    onWait?: (wait: Wait) => void,
    maxRetries?: number,
  ) => createClient({ baseUrl: base, apiKey: await api.createKey(1, key), onWait, maxRetries });
  return { api, signed, receiptClient };
}

describe('client: lists, records and receipts against the service', () => {
  it('walks every page with all(): each record once, in id order, as many as meta.total', async (t) => {
    const { client } = await bigCompany(t);
    const ids: number[] = [];
    for await (const item of client.leaves.all({ per_page: 40 })) ids.push(item.id);
    assert.deepEqual(
      ids,
      Array.from({ length: LEAVES }, (_, i) => i + 1),
    );
    const first = await client.leaves.list({ per_page: 40 });
    assert.deepEqual(first.meta, {
      current_page: 1,
      per_page: 40,
      total: LEAVES,
      last_page: 8,
      from: 1,
      to: 40,
    });
    const employees: number[] = [];
    for await (const item of client.employees.all()) employees.push(item.id);
    assert.equal(employees.length, EMPLOYEES, 'the other company’s employee is not listed');
  });

  it('sends array filters as comma lists and integer ids as numbers', async (t) => {
    const { client } = await bigCompany(t);
    const page = await client.leaves.list({
      employee_id: [2, 3, 4],
      status: ['approved', 'pending'],
      per_page: 100,
    });
    assert.deepEqual(
      page.data.map((item) => item.employee.id).sort((a, b) => a - b),
      [2, 2, 3, 3, 4, 4],
    );
    const terminated: number[] = [];
    for await (const item of client.employees.all({ status: ['terminated'] }))
      terminated.push(item.id);
    assert.equal(terminated.length, EMPLOYEES / 10);
    assert.ok(terminated.every((id) => id % 10 === 0));
    // An empty list would match nothing, and leaving it out would match everything: neither is
    // sent; the call throws before any request.
    for (const query of [{ employee_id: [] }, { status: [] as 'approved'[] }]) {
      await assert.rejects(client.leaves.list(query), {
        name: 'TypeError',
        message: `${Object.keys(query)[0]}: an empty list matches no record; leave the filter out to list them all`,
      });
    }
  });

  it('asks for compressed answers unless told not to', async (t) => {
    const { client, base, apiKey, encodings } = await bigCompany(t);
    const compressed = await client.leaves.list({ per_page: 100 });
    const plain = await createClient({ baseUrl: base, apiKey, compress: false }).leaves.list({
      per_page: 100,
    });
    assert.deepEqual(plain, compressed);
    assert.equal(encodings.length, 2);
    assert.notEqual(encodings[0], 'identity');
    assert.equal(encodings[1], 'identity');
  });

  it('gets one record, the reference lists and /me', async (t) => {
    const { client } = await bigCompany(t);
    const detail = await client.leaves.get(7);
    assert.equal(detail.id, 7);
    assert.equal(detail.document.has_attachments, true);
    assert.equal((await client.employees.get(250)).employee_number, 'E-250');
    assert.deepEqual(
      (await client.leaveTypes()).map((type) => type.id),
      [1, 2],
    );
    assert.deepEqual(
      (await client.expenseCategories()).map((item) => item.id),
      [1],
    );
    assert.equal((await client.me()).company.id, 1);
  });

  it('throws ApiError with the problem’s fields and the request id', async (t) => {
    const { client, base } = await bigCompany(t);
    const missing = await client.employees.get(1000).catch((error: unknown) => error);
    assert.ok(missing instanceof ApiError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
    assert.equal(missing.detail, 'No record with this id exists.');
    assert.equal(missing.errors, undefined);
    assert.match(missing.requestId ?? '', /^[0-9a-f-]{36}$/);

    const invalid = await client.leaves
      .list({ from: '2026-03-05', to: '2026-03-01' })
      .catch((error: unknown) => error);
    assert.ok(invalid instanceof ApiError);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.code, 'validation_failed');
    assert.deepEqual(invalid.errors, [
      { parameter: 'from', message: 'must not be after to' },
      { parameter: 'to', message: 'must not be before from' },
    ]);

    const unauthenticated = await createClient({ baseUrl: base, apiKey: 'cdk_nope' })
      .me()
      .catch((error: unknown) => error);
    assert.ok(unauthenticated instanceof ApiError);
    assert.equal(unauthenticated.code, 'unauthenticated');
  });

  it('fetches a receipt through the signed redirect: the processed JPEG and the original bytes', async (t) => {
    const { api, client } = await bigCompany(t);
    const processed = await client.expenses.receipt(1);
    assert.equal(processed.contentType, 'image/jpeg');
    assert.deepEqual([...processed.data.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const original = await client.expenses.receipt(1, { variant: 'original' });
    assert.deepEqual(Buffer.from(original.data), readFileSync(join(api.dir, 'photo.jpg')));
    const none = await client.expenses.receipt(2).catch((error: unknown) => error);
    assert.ok(none instanceof ApiError);
    assert.equal(none.code, 'receipt_not_found');
  });

  it('fetches the signed URL at once when the key’s window is spent (the URL needs no key)', async (t) => {
    const { receiptClient } = await receiptSetup(t);
    const waits: Wait[] = [];
    const client = await receiptClient({ perMinute: 1 }, (wait) => waits.push(wait));
    // The redirect spends the minute's one request; the link is fetched at once, not a minute
    // later when it has expired.
    const receipt = await client.expenses.receipt(1, { signal: AbortSignal.timeout(10_000) });
    assert.equal(receipt.contentType, 'image/jpeg');
    assert.deepEqual(waits, []);
  });

  it('asks again for a signed URL that expired before it was fetched, once', async (t) => {
    const { signed, receiptClient } = await receiptSetup(t);
    signed.late = 1;
    const client = await receiptClient();
    const receipt = await client.expenses.receipt(1);
    assert.equal(receipt.contentType, 'image/jpeg');
    assert.equal(signed.fetches, 2);
    // Expired twice: the second refusal is the caller's.
    signed.late = 4;
    const error = await client.expenses.receipt(1).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.code, 'invalid_signature');
    assert.equal(signed.fetches, 4);
  });

  it('throws for a page that is no image, and asks again for an image cut short', async (t) => {
    const { api, signed, receiptClient } = await receiptSetup(t);
    const waits: Wait[] = [];
    const client = await receiptClient({}, (wait) => waits.push(wait), 1);
    const photo = readFileSync(join(api.dir, 'photo.jpg'));
    // A captive portal's 200: no image, and asking again would not make it one.
    signed.fault = { kind: 'page', times: 1 };
    const page = await client.expenses.receipt(1).catch((e: unknown) => e);
    assert.ok(page instanceof ReceiptError, String(page));
    assert.equal(page.incomplete, false);
    assert.match(page.message, /answered text\/html; charset=utf-8, not an image/);
    assert.equal(signed.fetches, 1);
    // Half the file, ended cleanly: the processed JPEG lacks its end marker, the original its
    // SHA-256; each is asked for again and arrives whole.
    for (const variant of ['processed', 'original'] as const) {
      signed.fetches = 0;
      signed.fault = { kind: 'half', times: 1 };
      const receipt = await client.expenses.receipt(1, { variant });
      assert.equal(signed.fetches, 2, variant);
      assert.deepEqual([...receipt.data.subarray(-2)], [0xff, 0xd9], variant);
      if (variant === 'original') assert.deepEqual(Buffer.from(receipt.data), photo);
    }
    // Whole but encoded by a proxy: its Content-Length counts the encoded bytes.
    signed.fetches = 0;
    signed.fault = { kind: 'gzip', times: 1 };
    const encoded = await client.expenses.receipt(1, { variant: 'original' });
    assert.deepEqual(Buffer.from(encoded.data), photo);
    assert.equal(signed.fetches, 1);
    // Cut short on every attempt: thrown once the retries run out.
    signed.fault = { kind: 'half', times: 2 };
    const cut = await client.expenses.receipt(1, { variant: 'original' }).catch((e: unknown) => e);
    assert.ok(cut instanceof ReceiptError, String(cut));
    assert.equal(cut.incomplete, true);
    assert.match(cut.message, /cut short \(its SHA-256 is not the one its ETag names\)/);
    // Each retry's wait names why: the original's hash, the processed JPEG's missing end.
    assert.deepEqual(
      waits.map((wait) => wait.failure),
      [
        'the receipt arrived cut short (the JPEG has no end-of-image marker)',
        'the receipt arrived cut short (its SHA-256 is not the one its ETag names)',
        'the receipt arrived cut short (its SHA-256 is not the one its ETag names)',
      ],
    );
  });

  it('gives up at once on signed redirects that go round, and follows no redirect of the API', async (t) => {
    const { signed, receiptClient } = await receiptSetup(t);
    const client = await receiptClient();
    signed.fault = { kind: 'loop', times: 100 };
    const loop = await client.expenses.receipt(1).catch((e: unknown) => e);
    assert.ok(loop instanceof TypeError, String(loop));
    // fetch's twenty redirects and the first fetch, once: not again for every retry.
    assert.equal(signed.fetches, 21);
    // A 304 is no redirect: the file URL's failure, not the API's.
    signed.fault = { kind: 'unasked304', times: 1 };
    const unasked = await client.expenses.receipt(1).catch((e: unknown) => e);
    assert.ok(unasked instanceof ApiError, String(unasked));
    assert.equal(unasked.code, 'http_304');
    assert.doesNotMatch(unasked.detail, /redirect/);
    // An answer of the API that redirects elsewhere (a misconfigured proxy) is not followed.
    signed.meMoved = true;
    const moved = await client.me().catch((e: unknown) => e);
    assert.ok(moved instanceof ApiError, String(moved));
    assert.equal(moved.status, 307);
    assert.equal(moved.code, 'http_307');
    assert.match(moved.detail, /redirect \(to http:\/\/127\.0\.0\.1:9\/captured\)/);
  });
});
