import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from './app.ts';
import { loadServerConfig } from './config.ts';
import { openDatabase } from './db/connect.ts';
import { MemoryRateLimitStore } from './ratelimit/memory-store.ts';
import { FileReceiptStore } from './receipts/fs-store.ts';
import { errorTable } from './schemas/problems.ts';

/**
 * The OpenAPI document as the service generates it with the default settings (no
 * PUBLIC_BASE_URL, the default signed-URL lifetime), from an app built over an empty in-memory
 * database. Nothing is read or written: describing the routes needs no data.
 */
export async function generateOpenApiDocument(): Promise<unknown> {
  const config = loadServerConfig({
    DATABASE_URL: 'sqlite::memory:',
    RECEIPTS_DIR: join(tmpdir(), 'cdapi-openapi-unused'),
    // Never used to sign anything here; set so no secret file is created under ./data.
    SIGNING_SECRET: 'openapi-document-generation-only-0000',
    LOG_LEVEL: 'silent',
  });
  const database = openDatabase(config.database);
  const limiter = new MemoryRateLimitStore();
  try {
    const app = await buildApp({
      config,
      database,
      limiter,
      receipts: new FileReceiptStore(config.receiptsDir),
    });
    try {
      await app.ready();
      return app.swagger();
    } finally {
      await app.close();
    }
  } finally {
    await limiter.close();
    await database.close();
  }
}

/** The committed form of the document: 2-space JSON, keys in generated order, final newline. */
export const renderOpenApiDocument = (document: unknown): string =>
  `${JSON.stringify(document, null, 2)}\n`;

const TABLE_START = '<!-- error-table: generated, do not edit -->';
const TABLE_END = '<!-- /error-table -->';

/** docs/api.md with its error table made again from the error registry (see `errorTable`). */
export function withErrorTable(markdown: string): string {
  const start = markdown.indexOf(TABLE_START);
  const end = markdown.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`no ${TABLE_START} … ${TABLE_END} block`);
  return `${markdown.slice(0, start)}${TABLE_START}\n${errorTable()}\n${markdown.slice(end)}`;
}
