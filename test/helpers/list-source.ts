import type SqliteDatabase from 'better-sqlite3';
import { type CompiledQuery, type Dialect, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import { companyDataVersion } from '../../src/db/companies.queries.ts';
import type { Database, Db } from '../../src/db/database.ts';
import { DerivedCache } from '../../src/db/derived-cache.ts';
import { EmployeeDirectories } from '../../src/db/embedded-employees.ts';
import type { AnchorRun, ListSource, SortBounds } from '../../src/db/list-source.ts';

/**
 * A list source over `db` for requests of `companyId` (at its data version as stored), with
 * empty caches of its own.
 */
export const freshListSource = (db: Db, companyId = 1): ListSource => ({
  db,
  version: () => companyDataVersion(db, companyId),
  derived: new DerivedCache<number>(),
  anchors: new DerivedCache<AnchorRun>(),
  samples: new DerivedCache(),
  bounds: new DerivedCache<SortBounds | null>(),
  employees: new EmployeeDirectories(),
});

/**
 * A list source over a SQLite connection or a PostgreSQL pool that keeps the text of every
 * statement it runs (and in `queries`, each with its parameters), for tests of what the list
 * queries ask the database.
 */
export function loggedListSource(database: SqliteDatabase.Database | pg.Pool) {
  const statements: string[] = [];
  const queries: CompiledQuery[] = [];
  const dialect: Dialect =
    'prepare' in database
      ? new SqliteDialect({ database })
      : new PostgresDialect({ pool: database });
  const db = new Kysely<Database>({
    dialect,
    log: (event) => {
      if (event.level !== 'query') return;
      statements.push(event.query.sql);
      queries.push(event.query);
    },
  });
  return { source: freshListSource(db), statements, queries };
}
