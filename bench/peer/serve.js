/**
 * The benchmark's peer (see bench/harness/peer.ts): Platformatic DB's generated REST API over
 * the bench's PostgreSQL tables, started with its programmatic API in a process of its own, run
 * by the Node.js this package installs (Platformatic DB 3 needs Node 22.19 or later).
 *
 * Configured as lean as Platformatic allows, so the comparison never handicaps it: REST only
 * (GraphQL off), no authorization, no migrations, no events, no metrics, logging at `warn`.
 * It only reads: every connection it opens is a read-only session
 * (`default_transaction_read_only`), so PostgreSQL itself refuses any write, and the write
 * routes are not registered. Only the tables the benchmark reads are exposed. Its root is a temporary directory, removed on
 * exit: nothing is written to the repository or to the database.
 *
 * Environment: PEER_DATABASE_URL (required), PEER_POOL_SIZE (default 10). Prints
 * `listening on URL` on stderr once it answers; stops on SIGTERM or SIGINT.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, version } from '@platformatic/db';

const connectionString = process.env.PEER_DATABASE_URL;
if (!connectionString) {
  process.stderr.write('peer: PEER_DATABASE_URL is not set\n');
  process.exit(2);
}
const poolSize = Number(process.env.PEER_POOL_SIZE || '10');

// Read by node-postgres for every connection it opens, beneath Platformatic's own settings.
process.env.PGOPTIONS = '-c default_transaction_read_only=on';

/**
 * The tables the mix reads, and the companies they belong to; no other is exposed (api_keys
 * holds key hashes). Their routes, as Platformatic names them, for the write routes below.
 */
const TABLES = {
  companies: 'companies',
  employees: 'employees',
  expense_categories: 'expenseCategories',
  expenses: 'expenses',
  leave_types: 'leaveTypes',
  leaves: 'leaves',
};
const WRITE_ROUTES = Object.values(TABLES).flatMap((name) => [
  { method: 'POST', path: `/${name}` },
  { method: 'PUT', path: `/${name}` },
  { method: 'PUT', path: `/${name}/{id}` },
  { method: 'DELETE', path: `/${name}/{id}` },
]);

const root = await mkdtemp(join(tmpdir(), 'cdapi-bench-peer-'));
const app = await create(
  root,
  {
    server: { port: 0, logger: { level: 'warn' } },
    db: {
      connectionString,
      poolSize,
      graphql: false,
      openapi: { ignoreRoutes: WRITE_ROUTES },
      events: false,
      schemalock: false,
      include: Object.fromEntries(Object.keys(TABLES).map((table) => [table, true])),
      limit: { default: 25, max: 100 },
    },
  },
  // Platformatic listens on 0.0.0.0 inside a container whatever the configuration says; the
  // server settings of the context win over it.
  { serverConfig: { hostname: '127.0.0.1' }, metricsConfig: false },
);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await app.stop();
  await rm(root, { recursive: true, force: true });
  process.exit(0);
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

await app.start({ listen: true });
process.stderr.write(
  `peer: Platformatic DB ${version} on Node.js ${process.version}, listening on ${app.url}\n`,
);
