import { type Expression, PostgresAdapter, type SqlBool, sql } from 'kysely';
import { fold } from '../fold.ts';
import type { Db } from './database.ts';

/**
 * `column LIKE %text%` on a folded column, with the search text folded the same way and
 * `%`, `_` and `\` taken literally.
 */
export function containsFolded(column: string, search: string): Expression<SqlBool> {
  // No stored text holds NUL (the importer refuses it) and PostgreSQL cannot take one in a
  // parameter: such a search matches nothing, alike on both databases.
  if (search.includes('\u0000')) return sql<SqlBool>`1 = 0`;
  const escaped = fold(search).replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escaped}%`} escape '\\'`;
}

export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * A column for a WHERE term that SQLite must not choose an index for (its unary plus); as it
 * is on PostgreSQL, whose statistics choose well. Lists name their date columns so when a few
 * named employees hold far fewer rows than the date range: SQLite read a year of the large
 * company's expenses through the covering date index (145,176 rows, 325 ms) to find three
 * employees' 26, which their own index gives at once.
 */
export function keptFromSqliteIndexChoice(db: Db, column: string): Expression<unknown> {
  return isPostgres(db) ? sql.ref(column) : sql`+${sql.ref(column)}`;
}

/** A table whose two folded text columns `search` looks in (see migration 0004). */
export interface SearchedTable {
  table: 'employees' | 'expenses';
  /** The qualified id and folded columns, e.g. `x.id`, `x.title_folded`. */
  id: string;
  columns: [string, string];
}

/** The shortest text the trigram index can find; shorter ones are looked for row by row. */
export const TRIGRAM = 3;

/**
 * Rows whose folded columns contain the search text, as `containsFolded` on either column
 * says. PostgreSQL answers that LIKE from its trigram indexes itself; SQLite is asked through
 * the FTS5 trigram table, whose phrase match is the same substring test.
 */
export function matchesSearch(
  db: Db,
  searched: SearchedTable,
  search: string,
): Expression<SqlBool> {
  if (!isPostgres(db) && searchedByIndex(search)) {
    return matchesAnyText(db, searched, [fold(search)]);
  }
  return containsSearch(searched, search);
}

/** Whether the trigram indexes find a search's rows (it is a trigram long, and holds no NUL). */
export const searchedByIndex = (search: string): boolean =>
  !search.includes('\u0000') && [...fold(search)].length >= TRIGRAM;

/**
 * Rows whose folded columns contain any of `texts` (each at least a trigram long), through the
 * trigram indexes: SQLite's FTS5 table with the texts as phrases of one query, PostgreSQL's
 * trigram indexes with a LIKE a text and column. No texts: no rows.
 */
export function matchesAnyText(
  db: Db,
  searched: SearchedTable,
  texts: readonly string[],
): Expression<SqlBool> {
  if (texts.length === 0) return sql<SqlBool>`1 = 0`;
  if (isPostgres(db)) {
    const [a, b] = searched.columns;
    const tests = texts.flatMap((text) => [containsFolded(a, text), containsFolded(b, text)]);
    return sql<SqlBool>`(${sql.join(tests, sql` or `)})`;
  }
  const index = sql.table(`${searched.table}_search`);
  const phrases = texts.map((text) => `"${text.replaceAll('"', '""')}"`).join(' OR ');
  return sql<SqlBool>`${sql.ref(searched.id)} in (select rowid from ${index} where ${index} match ${phrases})`;
}

/**
 * Rows whose folded columns contain the search text, by LIKE: PostgreSQL reads it from its
 * trigram indexes where they serve it, SQLite tests it on each row.
 */
function containsSearch(searched: SearchedTable, search: string): Expression<SqlBool> {
  const [a, b] = searched.columns;
  return sql<SqlBool>`(${containsFolded(a, search)} or ${containsFolded(b, search)})`;
}

/**
 * `containsSearch` as a test of each row a query reads anyway (a walk in a sort order, the rows
 * of narrow date bounds), never through an index: a common text (a tenth of a million expenses
 * hold `otel`) would otherwise have its whole trigram match read for every page, where a walk
 * meets a match every few rows. SQLite's LIKE is that test already. PostgreSQL's
 * planner answers a LIKE from the trigram indexes where it can, and intersected their whole
 * match with the walk's rows: `/expenses?search=arke&sort=-created_at&page=2`'s walk of 1,001
 * rows built a bitmap of the 50,200 merchants holding `arke` first, 23.6 ms, against 2.5 ms
 * testing the rows. `strpos`, the same substring test on the folded texts (literal, so nothing
 * is escaped), is no operator those indexes serve.
 */
export function testedOnEachRow(
  db: Db,
  searched: SearchedTable,
  search: string,
): Expression<SqlBool> {
  if (!isPostgres(db)) return containsSearch(searched, search);
  if (search.includes('\u0000')) return sql<SqlBool>`1 = 0`;
  const folded = fold(search);
  const [a, b] = searched.columns.map((column) => sql.ref(column));
  return sql<SqlBool>`(strpos(${a}, ${folded}) > 0 or strpos(${b}, ${folded}) > 0)`;
}
