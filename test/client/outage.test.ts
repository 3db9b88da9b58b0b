import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { ApiError, type Client, createClient } from '../../client/src/index.ts';
import { useApi } from '../helpers/api.ts';
import { adminQuery as admin, testDialects } from '../helpers/databases.ts';
import { countStatuses, listenApi } from '../helpers/listen.ts';
import { smallCompany } from '../helpers/records.ts';

/**
 * A service over its own PostgreSQL database, and switches that take the database away (no new
 * connection allowed, every open one terminated) and give it back.
 */
async function outageApi(t: TestContext) {
  const api = await useApi(t, 'postgres', { records: smallCompany(1, 0) });
  const name = new URL(api.url).pathname.slice(1);
  const statuses = countStatuses(api);
  const outage = { onUnavailable: () => {} };
  api.app.addHook('onSend', async (_request, reply) => {
    if (reply.statusCode === 503) outage.onUnavailable();
  });
  const base = await listenApi(api);
  const apiKey = await api.createKey(1);
  const restore = () => admin(`alter database ${name} allow_connections true`);
  // Runs after the database is dropped when the test passed: then there is nothing to restore.
  t.after(() =>
    restore().catch((error: { code?: string }) => {
      if (error.code !== '3D000') throw error;
    }),
  );
  const stop = async () => {
    await admin(`alter database ${name} allow_connections false`);
    await admin(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
    );
  };
  /**
   * Stops the database and renames it away, an empty one made in its place when `recreate`;
   * returns what puts it back (run when the test ends at the latest).
   */
  const takeAway = async (recreate: boolean) => {
    await stop();
    await admin(`alter database ${name} rename to ${name}_away`);
    if (recreate) await admin(`create database ${name}`);
    let back = false;
    const putBack = async () => {
      if (back) return;
      back = true;
      if (recreate) await admin(`drop database if exists ${name} with (force)`);
      await admin(`alter database ${name}_away rename to ${name}`);
      await restore();
    };
    t.after(putBack);
    return putBack;
  };
  return { outage, statuses, base, apiKey, stop, restore, takeAway };
}

/** The client's call fails with the service's 503 (after any retries it makes). */
async function assertUnavailable(client: Client): Promise<void> {
  const error = await client.employees.list().catch((e: unknown) => e);
  assert.ok(error instanceof ApiError, String(error));
  assert.equal(error.status, 503);
  assert.equal(error.code, 'service_unavailable');
}

const skip = testDialects().find((dialect) => dialect.name === 'postgres')?.skip ?? false;

it('client: a stopped PostgreSQL answers 503; the client retries, then throws ApiError 503', {
  skip,
}, async (t) => {
  const { statuses, base, apiKey, stop } = await outageApi(t);
  await stop();
  const client = createClient({ baseUrl: base, apiKey, maxRetries: 1 });
  await assertUnavailable(client);
  assert.equal(statuses.get(503), 2, 'one attempt and one retry');
});

it('client: a call made while PostgreSQL is stopped succeeds once it is back', {
  skip,
}, async (t) => {
  const { outage, statuses, base, apiKey, stop, restore } = await outageApi(t);
  let restored: Promise<void> | null = null;
  outage.onUnavailable = () => {
    restored ??= restore();
  };
  await stop();
  const client = createClient({ baseUrl: base, apiKey });
  const page = await client.employees.list();
  assert.deepEqual(
    page.data.map((item) => item.id),
    [1],
  );
  assert.ok((statuses.get(503) ?? 0) >= 1, 'the first attempt met the outage');
  await restored;
});

it('a PostgreSQL database that is gone (renamed away) answers 503, and 200 once it is back', {
  skip,
}, async (t) => {
  const { base, apiKey, takeAway } = await outageApi(t);
  const client = createClient({ baseUrl: base, apiKey, maxRetries: 0 });
  const putBack = await takeAway(false);
  await assertUnavailable(client);
  await putBack();
  assert.deepEqual(
    (await client.employees.list()).data.map((item) => item.id),
    [1],
  );
});

it('a PostgreSQL database recreated empty answers 503 and is not ready, and 200 once it is back', {
  skip,
}, async (t) => {
  const { base, apiKey, takeAway } = await outageApi(t);
  const client = createClient({ baseUrl: base, apiKey, maxRetries: 0 });
  const ready = () => fetch(new URL('/readyz', base));
  const putBack = await takeAway(true);
  await assertUnavailable(client);
  const notReady = await ready();
  assert.equal(notReady.status, 503);
  assert.match(
    ((await notReady.json()) as { detail: string }).detail,
    /does not hold this version's schema/,
  );
  await putBack();
  assert.deepEqual(
    (await client.employees.list()).data.map((item) => item.id),
    [1],
  );
  assert.equal((await ready()).status, 200);
});
