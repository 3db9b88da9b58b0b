import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.ts';
import { warmConnections } from '../../src/db/warm-connections.ts';
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

/**
 * Before the service listens, its pool opens a connection for each core (the statements that
 * can run at once), each a server process of its own that has planned a statement over every
 * table, so the first requests after a restart neither open one nor load the catalog.
 */
it('opens as many PostgreSQL connections as the host has cores before the service listens, at most the pool’s size', {
  skip: postgres?.skip ?? false,
}, async (t) => {
  const { target, handle } = await useDatabase(t, 'postgres');
  if (handle.dialect !== 'postgres') throw new Error('a PostgreSQL test');
  assert.equal(handle.pool.totalCount, 0);
  await warmConnections(handle);
  const expected = Math.min(10, availableParallelism());
  assert.equal(handle.pool.totalCount, expected);
  assert.equal(handle.pool.idleCount, expected, 'every connection is given back');
  const backends = await sql<{ count: number }>`
    select count(*)::int as count from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid()`.execute(handle.db);
  assert.equal(backends.rows[0]?.count, expected - 1, 'each is a server process of its own');

  const single = openDatabase(target, { max: 1 });
  t.after(() => single.close());
  if (single.dialect !== 'postgres') throw new Error('a PostgreSQL test');
  await warmConnections(single);
  assert.equal(single.pool.totalCount, 1);
});
