import { sql } from 'kysely';
import type { Db } from './database.ts';
import { preparedQuery } from './plan-once.ts';
import { VERSION_COLUMN } from './statement-ledger.ts';

export interface CompanySummary {
  id: number;
  name: string;
  timezone: string;
  active: boolean;
}

const COLUMNS = ['id', 'name', 'timezone', 'active'] as const;
const toSummary = (row: {
  id: number;
  name: string;
  timezone: string;
  active: boolean | 0 | 1;
}) => ({
  ...row,
  active: Boolean(row.active),
});

export async function listCompanies(db: Db): Promise<CompanySummary[]> {
  const rows = await db.selectFrom('companies').select(COLUMNS).orderBy('id').execute();
  return rows.map(toSummary);
}

export async function findCompany(db: Db, id: number): Promise<CompanySummary | null> {
  const row = await db
    .selectFrom('companies')
    .select(COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toSummary(row) : null;
}

/** Returns the company after the change, or null when no company has that id. */
export async function setCompanyActive(
  db: Db,
  id: number,
  active: boolean,
): Promise<CompanySummary | null> {
  await db
    .updateTable('companies')
    .set({ active: active ? 1 : 0 })
    .where('id', '=', id)
    .execute();
  return findCompany(db, id);
}

/**
 * The company's data version as a column of another statement's rows, read in that statement's
 * snapshot: a page's rows read with it tell whether an import committed while the page was read
 * without a statement of their own (see statement-ledger.ts).
 */
export const companyVersion = (db: Db, companyId: number) =>
  db
    .selectFrom('companies')
    .select('companies.data_version')
    .where('companies.id', '=', companyId)
    .as(VERSION_COLUMN);

const dataVersionOf = preparedQuery((db, values: { id: number }) =>
  db.selectFrom('companies').select('data_version').where('id', '=', values.id),
);

/**
 * The company's data version: every import that touches the company moves it on in its own
 * transaction (`nextDataVersion`), so anything derived from the data can be cached under it.
 */
export async function companyDataVersion(db: Db, id: number): Promise<number> {
  const [row] = await dataVersionOf(db, { id });
  return row?.data_version ?? 0;
}

/**
 * The next data version, as the value of `data_version` in an update of `companies` or of a
 * table that follows a company's version: one more than it is, or the time `at` in
 * milliseconds where that is larger. So a version never comes back in a database's life, even
 * when the database is restored from an older copy under running instances: what they kept
 * under the versions of the imports after the copy was taken would otherwise be served again
 * once the imports after the restore reached those numbers (a record deleted since included).
 * Imports after the restore take the time, which has moved past those numbers. Every update
 * that moves a company on passes the same `at` for its company row and its followers.
 */
export const nextDataVersion = (at: number) => oneMoreOrTime('data_version', at);

/**
 * The company's next import number (`companies.change_seq`, the change feed's order), as
 * `nextDataVersion` takes versions and for the same reason: a cursor of the feed names the
 * number of the import that made its entry, and a database restored from an older copy would
 * otherwise give a lost import's number to an import after the restore, where the lost
 * import's cursors would read on as if their client held what the restored data holds. A
 * number no import after the restore can take is one the feed can refuse (src/db/changes.queries.ts).
 */
export const nextImportNumber = (at: number) => oneMoreOrTime('change_seq', at);

const oneMoreOrTime = (column: 'data_version' | 'change_seq', at: number) =>
  sql<number>`case when ${sql.ref(column)} + 1 > ${at} then ${sql.ref(column)} + 1 else cast(${at} as bigint) end`;
