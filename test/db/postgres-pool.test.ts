import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { testDialects, useDatabase } from '../helpers/databases.ts';

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

/** How long pg-pool keeps an idle connection unless told otherwise. */
const PG_POOL_DEFAULT_IDLE_MS = 10_000;

/**
 * A pooled connection left idle stays open: a new one is a new server process, whose first
 * statements load the catalog and plan the prepared statements again, and an integrator that
 * polls every minute would pay that on each first request.
 */
it('keeps an idle PostgreSQL connection open past pg-pool’s default idle time', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  const { handle } = await useDatabase(t, 'postgres');
  if (handle.dialect !== 'postgres') throw new Error('a PostgreSQL test');
  const backend = async () =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]?.pid;
  const before = await backend();
  assert.equal(handle.pool.idleCount, 1);
  await sleep(PG_POOL_DEFAULT_IDLE_MS + 1_000);
  assert.equal(handle.pool.idleCount, 1, 'the idle connection is still in the pool');
  assert.equal(await backend(), before, 'the same server process answers');
});
