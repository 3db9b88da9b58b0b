import { availableParallelism } from 'node:os';
import type pg from 'pg';
import type { DatabaseHandle } from './connect.ts';

/** The tables of the service's schema that its role may read, as PostgreSQL lists them. */
const OWN_TABLES = `
  select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = current_schema() and c.relkind in ('r', 'p')
    and has_table_privilege(c.oid, 'select')
  order by c.relname`;

/** Plans (and does not run) a statement over each of `tables` on `client`. */
async function planEach(client: pg.PoolClient, tables: readonly string[]): Promise<void> {
  for (const name of tables) {
    await client.query(`explain select * from ${client.escapeIdentifier(name)}`);
  }
}

/**
 * PostgreSQL: opens as many of the pool's connections as the host has cores (no more than the
 * pool holds), the statements that can run at once, and has each plan a statement over every
 * table of the schema. A connection is a new server process: opening it took 11–17 ms on the
 * bench machine, and its first statement over a table loaded that table's and its indexes'
 * descriptions into the process's catalog caches (the first page of expenses 7–8 ms, the next
 * 1 ms). The service's first requests after a restart paid both, and a cheap request waiting
 * for one of those connections with them: `/me` 27–35 ms while the first heavy requests ran
 * (docs/performance.md, item 95). The pool keeps its connections while idle (`openDatabase`),
 * so these stay. SQLite has nothing to open: its reader threads start with the handle.
 */
export async function warmConnections(handle: DatabaseHandle): Promise<void> {
  if (handle.dialect !== 'postgres') return;
  const { pool } = handle;
  const count = Math.min(pool.options.max ?? 10, availableParallelism());
  const clients: pg.PoolClient[] = [];
  try {
    // Each held while the next is taken, so each is a connection of its own (the first, the
    // one the schema's check left open).
    while (clients.length < count) clients.push(await pool.connect());
    const [first] = clients;
    if (!first) return;
    const { rows } = await first.query<{ name: string }>(OWN_TABLES);
    const tables = rows.map((row) => row.name);
    await Promise.all(clients.map((client) => planEach(client, tables)));
  } finally {
    for (const client of clients) client.release();
  }
}
