import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { createDemoCompany } from '../../src/demo/demo.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import {
  CHROMIUM,
  CHROMIUM_FOUND as found,
  launchBrowser,
  OUTPUT_DIR,
  SKIP_WITHOUT_CHROMIUM as skip,
  BROWSER_TIMEOUT_MS as TIMEOUT_MS,
} from '../helpers/browser.ts';

/** The API's ten operations (docs/api.md "Operations"): the page must show each of them. */
const OPERATIONS = [
  'GET /me',
  'GET /employees',
  'GET /employees/{id}',
  'GET /leaves',
  'GET /leaves/{id}',
  'GET /leave-types',
  'GET /expenses',
  'GET /expenses/{id}',
  'GET /expenses/{id}/receipt',
  'GET /expense-categories',
];

const GETTING_STARTED = ['Authentication', 'Pagination', 'Rate limits', 'Errors'];

/** A name other than localhost, resolved by the browser alone to this machine. */
const OTHER_HOST = 'docs.example';

/** Records what the page logs as errors and every URL it requests. */
function watch(page: Page): { errors: string[]; requests: string[] } {
  const seen = { errors: [] as string[], requests: [] as string[] };
  page.on('console', (message) => {
    if (message.type() === 'error') seen.errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.errors.push(`page error: ${error.message}`));
  page.on('request', (request) => seen.requests.push(request.url()));
  return seen;
}

/** Requests that went anywhere but `origin` (inline data and blobs stay in the page). */
function leavingOrigin(requests: string[], origin: string): string[] {
  return requests.filter(
    (url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'),
  );
}

/** Opens the page and waits, bounded, until the operations and the description are drawn. */
async function openDocs(page: Page, origin: string): Promise<void> {
  const response = await page.goto(`${origin}docs/`, { waitUntil: 'load' });
  assert.equal(response?.status(), 200);
  await page.locator('.opblock-summary-path').first().waitFor({ state: 'visible' });
  await page
    .locator('.information-container')
    .getByRole('heading', { name: 'Errors', exact: true })
    .waitFor({ state: 'visible' });
  // Lets the last responses (icons) arrive, so the checks see every request the page makes.
  await page.waitForLoadState('networkidle');
}

/** An element's text with its white space as one space each. */
const plainText = async (element: Locator) =>
  ((await element.textContent()) ?? '').replace(/\s+/g, ' ').trim();

/** The operation block of `path` (the API's operations are all GETs). */
const operationBlock = (page: Page, path: string): Locator =>
  page
    .locator('.opblock')
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

/** Pastes the key into Authorize's dialog, as a person does once. */
async function authorize(page: Page, key: string): Promise<void> {
  await page.locator('button.authorize').first().click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('#auth-bearer-value').fill(key);
  await dialog.locator('button[aria-label="Apply credentials"]').click();
  await dialog.locator('button.btn-done').click();
  await dialog.waitFor({ state: 'detached' });
}

interface Executed {
  status: string;
  /** The request URL Swagger UI shows. */
  url: string;
  /** The response body as shown: JSON text, or null for an image. */
  body: string | null;
  image: boolean;
}

/**
 * Opens an operation, "Try it out", fills only the path id (when there is one), Execute: what a
 * person does on first click. Clears the answer, cancels "Try it out", closes the operation.
 */
async function execute(page: Page, path: string, id?: number): Promise<Executed> {
  const block = operationBlock(page, path);
  const toggle = block.locator('.opblock-summary-control');
  await toggle.click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  if (id !== undefined) await block.locator('tr[data-param-name="id"] input').fill(String(id));
  await block.getByRole('button', { name: 'Execute' }).click();
  const response = block.locator('.live-responses-table .response').first();
  const status = (await response.locator('.response-col_status').textContent())?.trim() ?? '';
  const url = (await block.locator('.request-url pre').textContent())?.trim() ?? '';
  const description = response.locator('.response-col_description');
  const image = (await description.locator('img').count()) > 0;
  const body = image ? null : await description.locator('pre').first().textContent();
  // The answer cleared and out of "Try it out" again, so the next visit starts as the first
  // did (and cannot read this answer for its own).
  await block.getByRole('button', { name: 'Clear' }).click();
  await block.locator('.live-responses-table').waitFor({ state: 'detached' });
  await block.getByRole('button', { name: 'Cancel' }).click();
  await toggle.click();
  await block.locator('.opblock-body').waitFor({ state: 'detached' });
  return { status, url, body, image };
}

/** A demo company (`cdapi serve --demo`'s data), its key, and an id of each record type. */
async function seedDemo(api: TestApi) {
  const demo = await createDemoCompany(api.handle, new FileReceiptStore(api.config.receiptsDir), {
    employees: 20,
  });
  const key = await api.createKey(demo.companyId);
  const firstId = async (list: string, where: (record: Record<string, unknown>) => boolean) => {
    const records = (await api.get(`${list}?per_page=100`, key)).json.data as Array<
      Record<string, unknown>
    >;
    const found = records.find(where);
    assert.ok(found, `no record in ${list} to open`);
    return found.id as number;
  };
  return {
    key,
    ids: {
      '/employees/{id}': await firstId('/employees', () => true),
      '/leaves/{id}': await firstId('/leaves', () => true),
      '/expenses/{id}': await firstId('/expenses', () => true),
      '/expenses/{id}/receipt': await firstId('/expenses', (e) => e.has_receipt === true),
    } as Record<string, number>,
  };
}

/** The parameters "Try it out" sends on its own: the declared defaults, never a filter. */
const DEFAULTS_ONLY = ['page', 'per_page', 'sort', 'variant', 'limit'];

/** `METHOD /path` of each operation block Swagger UI rendered, in page order. */
async function renderedOperations(page: Page): Promise<string[]> {
  const operations: string[] = [];
  for (const block of await page.locator('.opblock').all()) {
    const method = (await block.locator('.opblock-summary-method').textContent()) ?? '';
    const path = await block.locator('.opblock-summary-path').getAttribute('data-path');
    operations.push(`${method.trim().toUpperCase()} ${path}`);
  }
  return operations;
}

describe('GET /docs/ (the API reference page)', () => {
  it('renders every operation and the guide offline, and works on first click with the demo key', {
    skip,
    // Opening each operation takes a few seconds on a busy machine.
    timeout: 12 * TIMEOUT_MS,
  }, async (t) => {
    assert.ok(
      found,
      `REQUIRE_ALL_SUITES=1 but Chromium is not at ${CHROMIUM}: the browser suite cannot run`,
    );
    const api = await useApi(t, 'sqlite');
    const demo = await seedDemo(api);
    const address = await api.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `${address}/`;
    const browser = await launchBrowser({
      height: 2000,
      args: [`--host-resolver-rules=MAP ${OTHER_HOST} 127.0.0.1`],
    });
    t.after(browser.close);

    const page = await browser.context.newPage();
    const seen = watch(page);
    await openDocs(page, origin);
    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'docs.png'), fullPage: true });

    await t.test('shows each of the ten operations, all of them reads', async () => {
      const shown = await renderedOperations(page);
      assert.deepEqual(
        OPERATIONS.filter((operation) => !shown.includes(operation)),
        [],
        `operations on the page: ${shown.join(', ')}`,
      );
      assert.deepEqual(
        shown.filter((operation) => !operation.startsWith('GET ')),
        [],
        'the API is read-only: no other method is an operation (405 answers are not operations)',
      );
    });

    await t.test(
      'fits a phone’s width with an operation open: nothing scrolls the page sideways',
      async () => {
        const size = page.viewportSize();
        await page.setViewportSize({ width: 375, height: 700 });
        const block = operationBlock(page, '/employees');
        await block.locator('.opblock-summary-control').click();
        await block.locator('.responses-table').first().waitFor({ state: 'visible' });
        assert.equal(await page.evaluate('document.documentElement.scrollWidth'), 375);
        await block.locator('.opblock-summary-control').click();
        await block.locator('.opblock-body').waitFor({ state: 'detached' });
        if (size) await page.setViewportSize(size);
      },
    );

    await t.test('shows the getting-started sections of the description', async () => {
      const info = page.locator('.information-container');
      for (const heading of GETTING_STARTED) {
        assert.equal(
          await info.getByRole('heading', { name: heading, exact: true }).isVisible(),
          true,
          `heading ${heading}`,
        );
      }
    });

    await t.test('opens every operation with its schemas resolved', async () => {
      const blocks = await page.locator('.opblock').all();
      for (const block of blocks) {
        const toggle = block.locator('.opblock-summary-control');
        await toggle.click();
        await block.locator('.opblock-body .responses-wrapper').waitFor({ state: 'visible' });
        // Closed again: every open operation makes the next one slower to draw.
        await toggle.click();
        await block.locator('.opblock-body').waitFor({ state: 'detached' });
      }
      // Swagger UI shows an unresolvable $ref or a broken document as a "Resolver error" box.
      await page.waitForLoadState('networkidle');
      assert.deepEqual(await page.locator('.errors-wrapper').allTextContents(), []);
    });

    await t.test('logs no console error', () => {
      assert.deepEqual(seen.errors, []);
    });

    await t.test('requests nothing outside this host', () => {
      assert.ok(seen.requests.length > 0, 'the page made no request at all');
      assert.deepEqual(leavingOrigin(seen.requests, origin), []);
    });

    await t.test('loads the same document as /openapi.json', async () => {
      assert.ok(seen.requests.includes(`${origin}docs/json`), seen.requests.join(', '));
      const shown = await api.get('/docs/json');
      const published = await api.get('/openapi.json');
      assert.equal(shown.status, 200);
      assert.equal(published.status, 200);
      assert.deepEqual(shown.json, published.json);
    });

    await t.test('renders when reached over plain HTTP by another host name', async () => {
      // A policy with upgrade-insecure-requests would send the assets to https:// and fail.
      const otherOrigin = origin.replace('127.0.0.1', OTHER_HOST);
      const other = await browser.context.newPage();
      const otherSeen = watch(other);
      await openDocs(other, otherOrigin);
      assert.deepEqual(otherSeen.errors, []);
      assert.deepEqual(leavingOrigin(otherSeen.requests, otherOrigin), []);
      assert.equal(await other.locator('.opblock').count(), await page.locator('.opblock').count());
    });

    // A fresh page of its own: the answers of Execute must not disturb the checks above.
    const tryPage = await browser.context.newPage();
    const trySeen = watch(tryPage);

    await t.test('takes the key once with Authorize and keeps it across a reload', async () => {
      await openDocs(tryPage, origin);
      await authorize(tryPage, demo.key);
      await tryPage.reload({ waitUntil: 'load' });
      await tryPage.locator('.opblock-summary-path').first().waitFor({ state: 'visible' });
      assert.match(
        (await tryPage.locator('button.authorize').first().getAttribute('class')) ?? '',
        /\blocked\b/,
      );
      // Nothing but the key is kept: the browser holds it, the page's URL does not.
      assert.doesNotMatch(tryPage.url(), /cdk_/);
    });

    await t.test(
      'answers 200 with the demo data on the first Execute of every operation',
      async () => {
        // The ten operations and the change feed: every data operation, each on first click.
        for (const operation of [...OPERATIONS, 'GET /changes']) {
          const path = operation.slice('GET '.length);
          const { status, url, body, image } = await execute(tryPage, path, demo.ids[path]);
          assert.equal(status, '200', `${operation}: ${body}`);
          const sent = [...new URL(url).searchParams.keys()];
          assert.deepEqual(
            sent.filter((name) => !DEFAULTS_ONLY.includes(name)),
            [],
            `${operation} prefilled ${url}`,
          );
          if (path === '/expenses/{id}/receipt') {
            assert.equal(image, true, `${operation}: the redirect followed to the image`);
            continue;
          }
          const json = JSON.parse(body ?? 'null');
          // /me answers the key's company and key; every other operation its `data`.
          const data = path === '/me' ? json.company : json.data;
          assert.ok(
            Array.isArray(data) ? data.length > 0 : typeof data?.id === 'number',
            `${operation}: ${body?.slice(0, 200)}`,
          );
        }
        assert.deepEqual(trySeen.errors, []);
      },
    );

    await t.test('leads from a problem’s type to the explanation of its code', async () => {
      const missing = await execute(tryPage, '/leaves/{id}', 999_999_999);
      assert.equal(missing.status, '404');
      const { type, code } = JSON.parse(missing.body ?? '{}');
      assert.equal(code, 'not_found');
      const target = new URL(type, tryPage.url());
      const errors = await browser.context.newPage();
      assert.equal((await errors.goto(target.href))?.status(), 200);
      const entry = errors.locator(`section[id="${code}"]`);
      assert.equal(await entry.isVisible(), true);
      assert.equal(
        await plainText(entry),
        'not_found 404 Not found Answered when no such path, or no record with this id in the key’s company (or a malformed id).',
      );
      // The reference page's own list of codes links each to its entry.
      const [opened] = await Promise.all([
        browser.context.waitForEvent('page'),
        tryPage.locator('.information-container a[href="/docs/errors#rate_limited"]').click(),
      ]);
      await opened.waitForLoadState('load');
      assert.equal(new URL(opened.url()).hash, '#rate_limited');
      assert.match(
        await plainText(opened.locator('section:target')),
        /^rate_limited 429 Too many requests Answered when the key’s rate limit is exhausted/,
      );
    });
  });
});
