import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { setIndexesAside } from '../../src/import/deferred-indexes.ts';
import { testDialects, useDatabase } from '../helpers/databases.ts';

const postgres = testDialects().find((dialect) => dialect.name === 'postgres');

/** The names of the table's indexes, as another connection sees them. */
const indexesOf = async (db: Db, table: string) =>
  (
    await sql<{
      indexname: string;
    }>`select indexname from pg_indexes where tablename = ${table}`.execute(db)
  ).rows
    .map((row) => row.indexname)
    .sort();

/** A migrated, empty PostgreSQL database and a second connection pool to it. */
async function twoConnections(t: TestContext) {
  const { target, handle } = await useDatabase(t, 'postgres');
  const other = openDatabase(target);
  t.after(() => other.close());
  return { db: handle.db, other: other.db };
}

describe('a first load’s indexes set aside (postgres)', { skip: postgres?.skip ?? false }, () => {
  it('leaves an empty table whose lock another transaction holds, with its indexes', async (t) => {
    const { db, other } = await twoConnections(t);
    const before = await indexesOf(db, 'expenses');
    // A reader (or another import's look at the table) holds its ACCESS SHARE lock.
    const reader = await other.startTransaction().execute();
    await sql`select 1 from expenses limit 1`.execute(reader);
    const trx = await db.startTransaction().execute();
    const setAside = await setIndexesAside(trx, 'postgres');
    assert.deepEqual(
      setAside.map((aside) => aside.table),
      ['employees', 'leaves'],
    );
    // Still in the same transaction: the statement after the refused lock ran.
    assert.deepEqual(await indexesOf(trx, 'expenses'), before);
    await trx.rollback().execute();
    await reader.rollback().execute();
  });

  it('never deadlocks two imports that both found the tables empty', async (t) => {
    const { db, other } = await twoConnections(t);
    const [first, second] = [
      await db.startTransaction().execute(),
      await other.startTransaction().execute(),
    ];
    // Both looked at the empty expenses table first, as two imports starting together do: each
    // dropping its indexes would wait for the other's lock.
    for (const trx of [first, second]) await sql`select 1 from expenses limit 1`.execute(trx);
    const setAsideIn = async (trx: typeof first) => {
      try {
        return (await setIndexesAside(trx, 'postgres')).map((aside) => aside.table);
      } finally {
        await trx.rollback().execute();
      }
    };
    // Neither fails: without the NOWAIT each one's DROP INDEX on expenses waited for the
    // other's lock (a deadlock PostgreSQL broke by failing one). Whichever reached expenses
    // first found the other still open and holding its lock, so it kept expenses' indexes (the
    // other may set them aside once the first has ended).
    const [a, b] = await Promise.all([setAsideIn(first), setAsideIn(second)]);
    assert.ok(!(a.includes('expenses') && b.includes('expenses')), `${a} / ${b}`);
  });
});
