import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { setCompanyActive } from '../../src/db/companies.queries.ts';
import type { Dialect } from '../../src/db/connect.ts';
import { signReceiptGrant } from '../../src/receipts/signing.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  leaveType,
  smallCompany,
} from '../helpers/records.ts';
import { listFiles } from '../helpers/snapshot.ts';

const XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator="SecretPhotographer"/></rdf:RDF></x:xmpmeta>';

/** A phone photo: stored sideways (EXIF orientation 6), with camera, GPS and XMP metadata. */
async function phonePhoto(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#d8d2c4' } })
    .withExif({
      IFD0: { Make: 'SecretCam', Model: 'X1' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '41/1 1/1 0/1' },
    })
    .withXmp(XMP)
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
}

/**
 * A 64 × 48 HEIC coded in HEVC, as phone cameras write them (`heif-enc` of libheif 1.15 with
 * x265): sharp's libvips has no HEVC decoder.
 */
const HEVC_HEIC =
  'AAAAHGZ0eXBoZWljAAAAAG1pZjFoZWljbWlhZgAAAaptZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAA' +
  'AAAAAAAAAAAAAA5waXRtAAAAAAACAAAAEGlkYXQAAAAAAEAAMAAAADhpbG9jAQAAAERAAAIAAQAAAAAAAAHOAAEA' +
  'AAAAAAAAGgACAAEAAAAAAAAAAQAAAAAAAAAIAAAAOGlpbmYAAAAAAAIAAAAVaW5mZQIAAAEAAQAAaHZjMQAAAAAV' +
  'aW5mZQIAAAAAAgAAZ3JpZAAAAADVaXBycAAAALNpcGNvAAAAc2h2Y0MBA3AAAAAAAAAAAAAe8AD8/fj4AAAPAyAA' +
  'AQAYQAEMAf//A3AAAAMAkAAAAwAAAwAeugJAIQABACdCAQEDcAAAAwCQAAADAAADAB6gIIEFlurkprmwIAAAAwAg' +
  'AAADACEiAAEABkQBwXPAiQAAABRpc3BlAAAAAAAAAEAAAABAAAAAFGlzcGUAAAAAAAAAQAAAADAAAAAQcGl4aQAA' +
  'AAADCAgIAAAAGmlwbWEAAAAAAAAAAgABAoECAAICA4QAAAAaaXJlZgAAAAAAAAAOZGltZwACAAEAAQAAACJtZGF0' +
  'AAAAFigBrxmA70mlv//Opn/TIL/gmtaY+bg=';

async function receiptApi(t: TestContext, dialect: Dialect, config = {}) {
  const api = await useApi(t, dialect, { config });
  const photo = await phonePhoto(3000, 1200);
  writeFileSync(join(api.dir, 'photo.jpg'), photo);
  writeFileSync(
    join(api.dir, 'scan.png'),
    await sharp({ create: { width: 20, height: 10, channels: 3, background: '#fff' } })
      .png()
      .toBuffer(),
  );
  await api.load([
    ...smallCompany(1, 0),
    expense(1, 2, 1, 1, { receipt: { original: 'photo.jpg' } }),
    expense(1, 3, 1, 1, { receipt: { original: 'scan.png' } }),
    company(2),
    employee(2, 100),
    leaveType(2, 100),
    category(2, 100),
    expense(2, 100, 100, 100, { receipt: { original: 'photo.jpg' } }),
  ]);
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = api.app.server.address() as { port: number };
  const base = `http://127.0.0.1:${port}/api/company/v1`;
  const key = await api.createKey(1);
  const auth = { authorization: `Bearer ${key}` };
  return { api, photo, base, key, auth };
}

interface ProblemBody {
  code: string;
  detail: string;
  errors?: Array<{ parameter: string; message: string }>;
}
const problemOf = async (response: Response) => (await response.json()) as ProblemBody;

async function redirectOf(base: string, path: string, auth: Record<string, string>) {
  const response = await fetch(`${base}${path}`, { headers: auth, redirect: 'manual' });
  // Read (a copy of it), so that its connection is free again; the answer can still be read.
  await response.clone().arrayBuffer();
  return response;
}

/**
 * The status of a GET, its body read: a body left unread keeps its connection busy, and the
 * server's close at the test's end waits for it (tens of seconds).
 */
async function statusOf(url: string): Promise<number> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.status;
}

describeEachDialect('receipts', (dialect) => {
  it('redirects to a signed URL that serves the original byte for byte', async (t) => {
    const { base, auth, photo } = await receiptApi(t, dialect);
    const redirect = await redirectOf(base, '/expenses/2/receipt?variant=original', auth);
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('cache-control'), 'no-store');
    const location = redirect.headers.get('location') ?? '';
    const signedUrl = new RegExp(
      `^${base}/receipt-files/2/original\\?company=1&expires=\\d+&signature=[\\w-]{43}$`,
    );
    assert.match(location, signedUrl);

    // A client that follows redirects lands on such a URL too (signed anew: its expiry may be a
    // second later), and the redirect's own URL serves the original.
    const followed = await fetch(`${base}/expenses/2/receipt?variant=original`, { headers: auth });
    assert.equal(followed.status, 200);
    assert.match(followed.url, signedUrl);
    const served = await fetch(location);
    assert.equal(served.status, 200);
    assert.equal(served.url, location);
    for (const response of [followed, served]) {
      const bytes = Buffer.from(await response.arrayBuffer());
      assert.equal(
        createHash('sha256').update(bytes).digest('hex'),
        createHash('sha256').update(photo).digest('hex'),
      );
    }
    assert.equal(followed.headers.get('content-type'), 'image/jpeg');
    assert.equal(followed.headers.get('content-length'), String(photo.length));
    assert.equal(followed.headers.get('content-disposition'), 'inline; filename="receipt-2.jpg"');
    assert.equal(followed.headers.get('x-content-type-options'), 'nosniff');
    assert.match(followed.headers.get('etag') ?? '', /^"[0-9a-f]{64}-original"$/);
    const maxAge = Number(
      /^private, max-age=(\d+)$/.exec(followed.headers.get('cache-control') ?? '')?.[1],
    );
    assert.ok(maxAge > 290 && maxAge <= 300, `max-age ${maxAge}`);
    // The file route needs no key and is not rate limited.
    const anonymous = await fetch(location);
    assert.equal(anonymous.status, 200);
    await anonymous.arrayBuffer();
    assert.equal(anonymous.headers.get('ratelimit'), null);
    // Its tag is matched as RFC 9110 §13.1.2 says for If-None-Match: weakly, in a list, or `*`.
    const etag = followed.headers.get('etag') ?? '';
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const unchanged = await fetch(location, { headers: { 'if-none-match': ifNoneMatch } });
      assert.equal(unchanged.status, 304, ifNoneMatch);
      assert.equal((await unchanged.arrayBuffer()).byteLength, 0);
      // The headers its 200 has (RFC 9110 §15.4.5): an image varies by nothing.
      assert.equal(unchanged.headers.get('vary'), followed.headers.get('vary'), ifNoneMatch);
    }
    const changed = await fetch(location, { headers: { 'if-none-match': '"other"' } });
    assert.equal(changed.status, 200);
    await changed.arrayBuffer();
    // The original keeps its stored type.
    const png = await fetch(`${base}/expenses/3/receipt?variant=original`, { headers: auth });
    assert.equal(png.headers.get('content-type'), 'image/png');
    await png.arrayBuffer();
  });

  it('serves a processed variant: upright, at most 2000 px, JPEG, no metadata', async (t) => {
    const { base, auth, photo } = await receiptApi(t, dialect);
    const original = await sharp(photo).metadata();
    assert.deepEqual([original.width, original.height, original.orientation], [3000, 1200, 6]);
    assert.ok(original.exif && original.xmp && photo.includes('SecretCam'));

    for (const path of ['/expenses/2/receipt', '/expenses/2/receipt?variant=processed']) {
      const response = await fetch(`${base}${path}`, { headers: auth });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/jpeg');
      const bytes = Buffer.from(await response.arrayBuffer());
      const processed = await sharp(bytes).metadata();
      assert.equal(processed.format, 'jpeg');
      // Orientation 6 means "rotate 90°": the 3000×1200 landscape becomes an upright portrait,
      // scaled so its long edge is 2000.
      assert.deepEqual([processed.width, processed.height], [800, 2000]);
      assert.equal(processed.orientation, undefined);
      assert.equal(processed.exif, undefined);
      assert.equal(processed.xmp, undefined);
      assert.equal(processed.icc, undefined);
      assert.equal(processed.iptc, undefined);
      assert.ok(!bytes.includes('SecretCam') && !bytes.includes('SecretPhotographer'));
    }
  });

  it('refuses a signed URL bent to another variant, expense or company, or altered anywhere', async (t) => {
    const { base, auth } = await receiptApi(t, dialect);
    const location =
      (await redirectOf(base, '/expenses/2/receipt?variant=processed', auth)).headers.get(
        'location',
      ) ?? '';
    assert.equal(await statusOf(location), 200);
    const url = new URL(location);
    const bent = [
      location.replace('/processed?', '/original?'),
      location.replace('/receipt-files/2/', '/receipt-files/3/'),
      // A path that names no expense or variant: altered too, not a 404.
      ...['thumb', 'Processed', 'processed%20', ''].map((v) =>
        location.replace('/processed?', `/${v}?`),
      ),
      ...['02', '2.0', '2e0', '%2B2', '-2', 'x', '9'.repeat(40)].map((id) =>
        location.replace('/receipt-files/2/', `/receipt-files/${id}/`),
      ),
      location.replace('company=1', 'company=2'),
      location.replace(/expires=(\d+)/, (_m, e) => `expires=${Number(e) + 1}`),
      // The same numbers, not written in plain decimal digits.
      ...['%2B1', '1.0', '1e0', '%201', '0x1'].map((c) =>
        location.replace('company=1', `company=${c}`),
      ),
      location.replace(/expires=(\d+)/, (_m, e) => `expires=${e}.0`),
      location.replace(/expires=(\d+)/, (_m, e) => `expires=${Number(e) / 100}e2`),
      location.replace(/signature=[\w-]+/, 'signature='),
      // Lengthened past anything signed: altered too, not a malformed request.
      location.replace(/signature=[\w-]+/, (m) => m + 'A'.repeat(200)),
      location.replace('company=1', `company=1${'0'.repeat(40)}`),
      location.replace(/expires=(\d+)/, (m) => m + '9'.repeat(40)),
      // The same numbers with leading zeros: not the text that was signed.
      location.replace('company=1', 'company=01'),
      location.replace('company=1', `company=${'0'.repeat(300)}1`),
      location.replace('expires=', 'expires=0'),
      location.slice(0, -1),
      location.replace(/&signature=[\w-]+/, ''),
    ];
    const signature = url.searchParams.get('signature') ?? '';
    for (let i = 0; i < signature.length; i += 1) {
      const swapped = signature[i] === 'A' ? 'B' : 'A';
      bent.push(
        location.replace(signature, signature.slice(0, i) + swapped + signature.slice(i + 1)),
      );
    }
    for (const candidate of bent) {
      const response = await fetch(candidate);
      assert.equal(response.status, 403, candidate);
      const body = await problemOf(response);
      assert.equal(body.code, 'invalid_signature');
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    }
  });

  it('refuses a signed URL once its company is deactivated, and serves it again once it is active', async (t) => {
    const { api, base, auth } = await receiptApi(t, dialect);
    const location =
      (await redirectOf(base, '/expenses/2/receipt', auth)).headers.get('location') ?? '';
    assert.equal(await statusOf(location), 200);
    await setCompanyActive(api.handle.db, 1, false);
    const refused = await fetch(location);
    assert.equal(refused.status, 403);
    const inactive = await problemOf(refused);
    assert.equal(inactive.code, 'company_inactive');
    assert.equal(inactive.detail, 'The company this receipt belongs to is inactive.');
    await setCompanyActive(api.handle.db, 1, true);
    assert.equal(await statusOf(location), 200);
  });

  it('refuses an expired signed URL', async (t) => {
    const { api, base, auth } = await receiptApi(t, dialect, { signedUrlTtlSeconds: 1 });
    const location =
      (await redirectOf(base, '/expenses/2/receipt', auth)).headers.get('location') ?? '';
    assert.equal(await statusOf(location), 200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    assert.equal(await statusOf(location), 403);
    // A URL signed correctly but with an expiry in the past is refused too.
    const past = Math.floor(Date.now() / 1000) - 1;
    const grant = { companyId: 1, expenseId: 2, variant: 'processed' as const, expires: past };
    const forged = `${base}/receipt-files/2/processed?company=1&expires=${past}&signature=${signReceiptGrant(grant, api.config.signingSecret)}`;
    assert.equal(await statusOf(forged), 403);
  });

  it('answers 404 for another company’s or a missing expense, receipt_not_found without a receipt, 422 for a bad variant', async (t) => {
    const { base, auth } = await receiptApi(t, dialect);
    const missing = await fetch(`${base}/expenses/999/receipt`, { headers: auth });
    const foreign = await fetch(`${base}/expenses/100/receipt`, {
      headers: auth,
      redirect: 'manual',
    });
    assert.equal(foreign.status, 404);
    assert.equal(await foreign.text(), await missing.text());
    const none = await fetch(`${base}/expenses/1/receipt`, { headers: auth });
    assert.equal(none.status, 404);
    assert.equal((await problemOf(none)).code, 'receipt_not_found');
    const bad = await fetch(`${base}/expenses/2/receipt?variant=thumbnail`, { headers: auth });
    assert.equal(bad.status, 422);
    assert.deepEqual((await problemOf(bad)).errors, [
      { parameter: 'variant', message: 'must be processed or original' },
    ]);
  });

  it('answers 404 receipt_not_found and warns the operator when the store has lost the file', async (t) => {
    const { api, base, auth } = await receiptApi(t, dialect);
    rmSync(api.config.receiptsDir, { recursive: true });
    const lost = await fetch(`${base}/expenses/2/receipt`, { headers: auth });
    assert.equal(lost.status, 404);
    assert.equal((await problemOf(lost)).code, 'receipt_not_found');
    const warnings = api.logLines().filter((line) => line.level === 40);
    assert.deepEqual(
      warnings.map(({ msg, expenseId, variant, companyId }) => ({
        msg,
        expenseId,
        variant,
        companyId,
      })),
      [
        {
          msg: 'receipt file missing from the receipt store (RECEIPTS_DIR)',
          expenseId: 2,
          variant: 'processed',
          companyId: 1,
        },
      ],
    );
  });

  it('counts the redirect against the rate limit, and needs expenses.read', async (t) => {
    const { api, base } = await receiptApi(t, dialect);
    const limited = await api.createKey(1, { perMinute: 1 });
    const first = await redirectOf(base, '/expenses/2/receipt', {
      authorization: `Bearer ${limited}`,
    });
    assert.equal(first.status, 302);
    const second = await redirectOf(base, '/expenses/2/receipt', {
      authorization: `Bearer ${limited}`,
    });
    assert.equal(second.status, 429);
    const leavesOnly = await api.createKey(1, { scopes: ['leaves.read'] });
    const refused = await redirectOf(base, '/expenses/2/receipt', {
      authorization: `Bearer ${leavesOnly}`,
    });
    assert.equal(refused.status, 403);
    assert.equal((await problemOf(refused)).code, 'insufficient_scope');
  });

  it('rejects a corrupt image at import with its line, leaving no file behind', async (t) => {
    const api: TestApi = await useApi(t, dialect);
    const truncated = (await phonePhoto(200, 100)).subarray(0, 300);
    writeFileSync(join(api.dir, 'broken.jpg'), truncated);
    await assert.rejects(
      api.load([
        ...smallCompany(1, 0),
        expense(1, 2, 1, 1, { receipt: { original: 'broken.jpg' } }),
      ]),
      /^ImportError: line 7: receipt\.original: broken\.jpg cannot be read as an image/,
    );
    assert.deepEqual(listFiles(api.config.receiptsDir), []);
  });

  it('takes an AVIF original, and refuses a HEIC coded in HEVC naming what to do', async (t) => {
    const api: TestApi = await useApi(t, dialect);
    const avif = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c33' } })
      .avif()
      .toBuffer();
    writeFileSync(join(api.dir, 'scan.avif'), avif);
    writeFileSync(join(api.dir, 'phone.heic'), Buffer.from(HEVC_HEIC, 'base64'));
    await assert.rejects(
      api.load([
        ...smallCompany(1, 0),
        expense(1, 2, 1, 1, { receipt: { original: 'phone.heic' } }),
      ]),
      /^ImportError: line 7: receipt\.original: phone\.heic is a HEIC image coded in HEVC, as phone cameras write them, which cdapi cannot decode \(its image library has no HEVC decoder\): convert it to JPEG first$/,
    );
    assert.deepEqual(listFiles(api.config.receiptsDir), []);
    await api.load([
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'scan.avif' } }),
    ]);
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = api.app.server.address() as { port: number };
    const base = `http://127.0.0.1:${port}/api/company/v1`;
    const auth = { authorization: `Bearer ${await api.createKey(1)}` };
    const original = await fetch(
      (await redirectOf(base, '/expenses/2/receipt?variant=original', auth)).headers.get(
        'location',
      ) as string,
    );
    assert.equal(original.headers.get('content-type'), 'image/avif');
    assert.deepEqual(Buffer.from(await original.arrayBuffer()), avif);
    const processed = await fetch(
      (await redirectOf(base, '/expenses/2/receipt', auth)).headers.get('location') as string,
    );
    assert.equal(processed.headers.get('content-type'), 'image/jpeg');
    assert.equal((await sharp(Buffer.from(await processed.arrayBuffer())).metadata()).width, 64);
  });

  it('rejects an image of more pixels than a receipt may have, before decoding it', async (t) => {
    const api: TestApi = await useApi(t, dialect);
    // A PNG whose header claims 20,000 × 20,000 pixels (a decompression bomb's), and a few bytes.
    const chunk = (type: string, data: Buffer) => {
      const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(typed));
      return Buffer.concat([length, typed, crc]);
    };
    const header = Buffer.alloc(13);
    header.writeUInt32BE(20_000, 0);
    header.writeUInt32BE(20_000, 4);
    header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', header),
      chunk('IDAT', deflateSync(Buffer.alloc(64))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    writeFileSync(join(api.dir, 'bomb.png'), bomb);
    await assert.rejects(
      api.load([...smallCompany(1, 0), expense(1, 2, 1, 1, { receipt: { original: 'bomb.png' } })]),
      /^ImportError: line 7: receipt\.original: bomb\.png has more than 268,402,689 pixels \(16,383 × 16,383\), the most a receipt may have$/,
    );
    assert.deepEqual(listFiles(api.config.receiptsDir), []);
  });
});
