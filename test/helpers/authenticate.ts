import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import { insertApiKey } from '../../src/db/keys.queries.ts';
import type { Authenticator } from '../../src/http/auth.ts';
import { importFile } from '../../src/import/importer.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { SCOPES } from '../../src/keys/scopes.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useTempDir } from './databases.ts';
import { company, writeNdjson } from './records.ts';

/** What the authentication hook does for a request that carries `key` to a route of any scope. */
export const authenticateKey = (authenticator: Authenticator, key: string): Promise<void> =>
  authenticator.authenticate(
    {
      headers: { authorization: `Bearer ${key}` },
      raw: { rawHeaders: ['Authorization', `Bearer ${key}`] },
      routeOptions: { config: { scope: null } },
    } as unknown as FastifyRequest,
    { headers: () => {} } as unknown as FastifyReply,
  );

/** Company 1 imported into `handle`'s empty database, and a key of it with room to spare. */
export async function companyWithKey(
  t: TestContext,
  handle: DatabaseHandle,
  name: string,
): Promise<{ key: string; keyId: number }> {
  const dir = useTempDir(t);
  await importFile(
    handle,
    new FileReceiptStore(join(dir, 'store')),
    writeNdjson(dir, [company(1)]),
  );
  const generated = generateApiKey();
  const stored = await insertApiKey(handle.db, {
    companyId: 1,
    name,
    prefix: generated.prefix,
    hash: generated.hash,
    scopes: [...SCOPES],
    perMinute: 1_000_000,
    perHour: 1_000_000,
  });
  return { key: generated.key, keyId: stored.id };
}
