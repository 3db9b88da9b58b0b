import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';

/** The Debian package's binary; CHROMIUM_PATH points elsewhere (e.g. to check the skip rule). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_FOUND = existsSync(CHROMIUM);
const REQUIRED = process.env.REQUIRE_ALL_SUITES === '1';
/** A browser test's `skip`: without Chromium, unless REQUIRE_ALL_SUITES=1 makes that a failure. */
export const SKIP_WITHOUT_CHROMIUM =
  CHROMIUM_FOUND || REQUIRED ? false : `Chromium not found at ${CHROMIUM}: browser test skipped`;

/** Every wait is bounded: a page that never renders fails the test instead of hanging it. */
export const BROWSER_TIMEOUT_MS = 30_000;
/** For a person to look at after a run; test-output/ is git-ignored. */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url));

/** A headless Chromium with a throw-away profile and nothing that phones home. */
export async function launchBrowser(
  options: { height?: number; args?: string[] } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'cdapi-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: BROWSER_TIMEOUT_MS,
    viewport: { width: 1280, height: options.height ?? 1200 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      ...(options.args ?? []),
    ],
  });
  context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
