import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { useApi } from '../helpers/api.ts';
import {
  CHROMIUM,
  CHROMIUM_FOUND as found,
  launchBrowser,
  OUTPUT_DIR,
  SKIP_WITHOUT_CHROMIUM as skip,
  BROWSER_TIMEOUT_MS as TIMEOUT_MS,
} from '../helpers/browser.ts';

/** The API's ten operations (SEED-SPEC.md): the page must show each of them. */
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
  it('renders every operation and the getting-started guide, offline and without errors', {
    skip,
    // Opening each operation takes a few seconds on a busy machine.
    timeout: 6 * TIMEOUT_MS,
  }, async (t) => {
    assert.ok(
      found,
      `REQUIRE_ALL_SUITES=1 but Chromium is not at ${CHROMIUM}: the browser suite cannot run`,
    );
    const api = await useApi(t, 'sqlite');
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
  });
});
