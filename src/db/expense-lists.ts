import { sql } from 'kysely';
import type { ExpenseStatus } from '../domain.ts';
import type { EXPENSE_SORT_FIELDS } from '../schemas/expenses.ts';
import type { Db } from './database.ts';
import { cachedCount, keyOf } from './derived-cache.ts';
import {
  countSearchedExpenses,
  SEARCHED_TEXTS,
  searchedTexts,
  trigramTexts,
} from './expense-texts.ts';
import { indexedBy } from './index-hints.ts';
import type { ListSource } from './list-source.ts';
import { GATHER_LIMIT, type ListQueries } from './pagination.ts';
import { sampledFilterOf, sampledTotal, samplesOf } from './sampled-filters.ts';
import {
  isPostgres,
  keptFromSqliteIndexChoice,
  matchesAnyText,
  matchesSearch,
  type SearchedTable,
  searchedByIndex,
  testedOnEachRow,
} from './search.ts';

export interface ExpenseFilters {
  status?: ExpenseStatus[];
  employeeIds?: number[];
  categoryIds?: number[];
  from?: string;
  to?: string;
  search?: string;
  updatedSince?: string;
}

export type ExpenseSortField = (typeof EXPENSE_SORT_FIELDS)[number];

/** The column each sort field orders by. */
export const EXPENSE_SORT_COLUMNS = {
  id: 'x.id',
  expense_date: 'x.expense_date',
  amount: 'x.amount_e4',
  created_at: 'x.created_at',
  updated_at: 'x.updated_at',
} as const satisfies Record<ExpenseSortField, string>;

/** An expense search looks in the folded title and merchant. */
const EXPENSE_SEARCH: SearchedTable = {
  table: 'expenses',
  id: 'x.id',
  columns: ['x.title_folded', 'x.merchant_folded'],
};

/** How `filtered` tests a search. */
interface SearchTest {
  /** The walk's sort column, whose bounds are not to choose SQLite's index (see below). */
  walkedBy?: string;
  /** Each row's texts tested (a walk, or the rows in date bounds), not looked up by index. */
  rowByRow?: boolean;
  /** A short search's texts, which the trigram indexes find (see `trigramTexts`). */
  trigramTexts?: readonly string[] | null;
}

/**
 * The company's expenses that match the filters, from the expenses table alone: the page's
 * ids and the count need no join (the foreign keys guarantee the joined rows).
 */
function filtered(db: Db, companyId: number, filters: ExpenseFilters, test: SearchTest = {}) {
  // The walk in `walkedBy`'s order enters its index at its own start (an anchor), not at a
  // filter's bound on the same column: SQLite takes the first bound it finds.
  const column = (name: 'x.expense_date' | 'x.updated_at') =>
    name === test.walkedBy ? keptFromSqliteIndexChoice(db, name) : sql.ref(name);
  // The ranges first: SQLite tests the terms in the order they are written (as for leaves).
  let q = db.selectFrom('expenses as x').where('x.company_id', '=', companyId);
  if (filters.from) q = q.where(column('x.expense_date'), '>=', filters.from);
  if (filters.to) q = q.where(column('x.expense_date'), '<=', filters.to);
  if (filters.updatedSince) q = q.where(column('x.updated_at'), '>=', filters.updatedSince);
  if (filters.categoryIds) q = q.where('x.category_id', 'in', filters.categoryIds);
  if (filters.employeeIds) q = q.where('x.employee_id', 'in', filters.employeeIds);
  if (filters.status) q = q.where('x.status', 'in', filters.status);
  const { search } = filters;
  if (search) {
    q = q.where(
      test.rowByRow
        ? testedOnEachRow(db, EXPENSE_SEARCH, search)
        : test.trigramTexts
          ? matchesAnyText(db, EXPENSE_SEARCH, test.trigramTexts)
          : matchesSearch(db, EXPENSE_SEARCH, search),
    );
  }
  return q;
}

/**
 * The company's expenses of the statuses and categories that carry one of a search's texts
 * (see `searchedTexts`) and fall in its date bounds, read from the texts' own indexes alone
 * (migration 0009): those whose title is one, then those whose merchant is one and whose title
 * is not. Every sort column is selected, under the alias the list queries name (`x`).
 */
function carryingTexts(
  db: Db,
  companyId: number,
  filters: Omit<ExpenseFilters, 'employeeIds' | 'search'>,
  texts: readonly string[],
) {
  const sqlite = !isPostgres(db);
  const branch = (index: string) => {
    let q = db
      .selectFrom('expenses as x')
      .select(Object.values(EXPENSE_SORT_COLUMNS))
      .where('x.company_id', '=', companyId);
    // Both indexes are keyed by the date after the text (migration 0021): a window is a range
    // of each text's entries. They carry `updated_at`: an `updated_since` is tested in them.
    if (filters.from) q = q.where('x.expense_date', '>=', filters.from);
    if (filters.to) q = q.where('x.expense_date', '<=', filters.to);
    if (filters.updatedSince) q = q.where('x.updated_at', '>=', filters.updatedSince);
    if (filters.status) q = q.where('x.status', 'in', filters.status);
    if (filters.categoryIds) q = q.where('x.category_id', 'in', filters.categoryIds);
    return indexedBy(q, index, sqlite);
  };
  // PostgreSQL could also find the texts by equality in their trigram indexes (pg_trgm 1.4+), and
  // chose to for a narrow `updated_since`: 50,000 entries of the bench company's most common
  // merchant read there and intersected with the bounds' rows, 45 ms, where the merchant's own
  // index read with `updated_at` tested in it took 4.7 ms. The range, which only that index can
  // read, makes its estimate the lower one; SQLite is told its index by name.
  const bounds = sqlite ? null : codePointBounds(texts);
  const carrying = (
    column: 'x.title_folded' | 'x.merchant_folded',
    q: ReturnType<typeof branch>,
  ) => {
    const bounded = bounds ? q.where(column, '>=', bounds[0]).where(column, '<=', bounds[1]) : q;
    return bounded.where(column, 'in', texts);
  };
  const titled = carrying('x.title_folded', branch('expenses_title_folded_list'));
  const merchants = carrying('x.merchant_folded', branch('expenses_merchant_folded_list')).where(
    'x.title_folded',
    'not in',
    texts,
  );
  return db.selectFrom(titled.unionAll(merchants).as('x'));
}

/**
 * The least and the greatest of some texts as PostgreSQL orders the folded columns (collation
 * "C": by the bytes of their UTF-8, which is code point order; JavaScript's `<` compares UTF-16
 * code units, which puts U+E000–U+FFFF after the characters beyond U+FFFF).
 */
function codePointBounds(texts: readonly string[]): [least: string, greatest: string] {
  const sorted = texts.map((text) => Buffer.from(text)).sort(Buffer.compare);
  return [String(sorted[0]), String(sorted[sorted.length - 1])];
}

/**
 * A search with no other filter than statuses and categories is counted from the distinct
 * texts of the company's expenses (see `countSearchedExpenses`).
 */
function searchedTotal(source: ListSource, companyId: number, filters: ExpenseFilters) {
  const { search } = filters;
  if (!search || filters.employeeIds || filters.from || filters.to || filters.updatedSince) {
    return undefined;
  }
  return (version: number) => searchedCount(source, companyId, version, search, filters);
}

const searchedCount = (
  source: ListSource,
  companyId: number,
  version: number,
  search: string,
  { status, categoryIds }: ExpenseFilters,
) =>
  source.derived.value(
    companyId,
    version,
    keyOf('searched expenses', [search, status, categoryIds]),
    () => countSearchedExpenses(source.db, companyId, search, { status, categoryIds }),
  );

/** Up to this many texts that contain a search within date bounds are read by their indexes. */
const DATED_SEARCH_TEXTS = 500;

/**
 * What a row in a date filter's bounds costs, read and tested against a search, in entries of
 * the texts' indexes (`carryingTexts`): on the bench data with SQLite a row cost 1.8–15 µs and
 * an entry 0.12–0.21 µs (warm and cold), so 10–70 entries. SQLite took 14, the low end, until
 * the cold mix drew searches within date bounds: a broad one-letter search in a quarter then
 * tested its 40,000-odd rows (0.4–0.7 s, where its texts' rows took a third of that); with 40
 * the mix's 642 such searches of the large company, one at a time, took 12.5–13.8 s in all
 * (slowest 331–351 ms) against 13.7–14.7 s (412–453 ms) with 14, 14.5 s with 70, 14.6 s with
 * 25. Since the texts' indexes are keyed by the date (migration 0021) this weighs an
 * `updated_since` alone, and only on SQLite: PostgreSQL (which did best with 14) reads the texts
 * of an `updated_since` in its bounds alone since migration 0024.
 */
const TESTED_DATED_ROW = 40;

/** The index that reads a window's rows, else those of an `updated_since`. */
const boundsIndex = (filters: ExpenseFilters) =>
  filters.from || filters.to ? 'expenses_expense_date_list' : 'expenses_updated_at_list';

/**
 * SQLite: how many rows of the statuses and categories asked for a search's `updated_since` (no
 * named employees, no window) holds, when those rows are to be tested rather than the search read
 * through its texts' own indexes, which carry `updated_at` (`carryingTexts`): when they are
 * fewer than the rows carrying its texts (of any) over TESTED_DATED_ROW, as in the last hour's
 * updates of a broad search. Else null.
 *
 * A company whose list has samples has them counted from the samples (`sampledTotal`: the
 * totals by status and category, less the rows below the sample before `updated_since`, plus
 * a count of fewer than SAMPLE_INTERVAL index entries), the same for every search with those
 * filters. Else a probe reads at most that many entries of the bounds' index (on PostgreSQL,
 * before migration 0024, 10,730 entries for the bench company's `search=Türk`, whose texts
 * 150,209 expenses carry: 24 ms each time a new `updated_since` came; docs/performance.md,
 * item 104).
 */
async function fewRowsInBounds(
  source: ListSource,
  companyId: number,
  filters: ExpenseFilters,
  unsearched: ReturnType<typeof filtered>,
  read: number,
): Promise<number | null> {
  const version = await source.version();
  const probed = Math.ceil(read / TESTED_DATED_ROW);
  const rows =
    (await sampledBoundsRows(source, companyId, filters, version)) ??
    (await probedBoundsRows(source, companyId, filters, unsearched, version, probed));
  return rows < probed ? rows : null;
}

/** The rows of `filters` but the search, from the list's samples; null when it has none. */
async function sampledBoundsRows(
  source: ListSource,
  companyId: number,
  filters: ExpenseFilters,
  version: number,
): Promise<number | null> {
  const samples = await samplesOf(source, companyId, 'expenses', version);
  const sampled =
    samples &&
    sampledFilterOf(
      { ...filters, search: undefined },
      filters.categoryIds,
      () => keptRows(source.db, companyId, filters),
      EXPENSE_WINDOW,
    );
  return sampled ? sampledTotal(source, companyId, 'expenses', samples, sampled, version) : null;
}

/** Up to `probed` of the rows of `unsearched`, counted along the bounds' index. */
function probedBoundsRows(
  source: ListSource,
  companyId: number,
  filters: ExpenseFilters,
  unsearched: ReturnType<typeof filtered>,
  version: number,
  probed: number,
): Promise<number> {
  const sqlite = !isPostgres(source.db);
  const bounded = unsearched.select(sql.lit(1).as('one')).limit(probed);
  const probe = source.db.selectFrom(
    indexedBy(bounded, boundsIndex(filters), sqlite).as('bounded'),
  );
  return cachedCount(source.derived, companyId, version, probe);
}

/** The company's expenses of the statuses and categories asked for, with no other filter. */
const keptRows = (db: Db, companyId: number, filters: ExpenseFilters) =>
  filtered(db, companyId, { status: filters.status, categoryIds: filters.categoryIds });

/** The columns a window filters: an expense is dated by its `expense_date` alone. */
const EXPENSE_WINDOW = { from: 'expense_date', to: 'expense_date' };

/**
 * How a filtered list of the company's expenses is read in a sort order: the queries of its
 * filters and what `listPage` weighs to choose among them.
 */
export async function expenseListQueries(
  source: ListSource,
  companyId: number,
  filters: ExpenseFilters,
  sortField: ExpenseSortField,
): Promise<ListQueries> {
  const sqlite = !isPostgres(source.db);
  const window = Boolean(filters.from || filters.to);
  const { search } = filters;
  const dated = !filters.employeeIds && Boolean(window || filters.updatedSince);
  const filtersBoundSortColumn = {
    id: false,
    expense_date: !filters.employeeIds && window,
    amount: false,
    created_at: false,
    updated_at: Boolean(filters.updatedSince),
  }[sortField];
  const texts = search
    ? await searchedTexts(source.db, companyId, search, dated ? DATED_SEARCH_TEXTS : undefined)
    : null;
  // A search without named employees is read by its texts' indexes (see `carryingTexts`),
  // unless its date bounds hold few rows (see `fewRowsInBounds`), which are then tested; one
  // that no text contains matches nothing, as its count says before a page is read.
  const found = texts !== null && texts.length > 0 && !filters.employeeIds;
  // The rows of every filter but the search (see `unsearched` in `ListQueries`).
  const unsearched = search
    ? filtered(source.db, companyId, { ...filters, search: undefined })
    : undefined;
  // The entries of the texts' indexes that a search within date bounds reads: those of every
  // status, category and date (they follow the text and the id).
  const textsRead =
    search && dated && found
      ? await searchedCount(source, companyId, await source.version(), search, {})
      : undefined;
  // A window's texts are read in the window alone (the texts' indexes are keyed by the date
  // after the text): never more entries than the window's rows, each cheaper than a tested row.
  // So are an `updated_since`'s on PostgreSQL, whose texts have indexes keyed by `updated_at`
  // too (migration 0024).
  const textsReadInBounds = window || !sqlite;
  const rowsInBounds =
    unsearched && textsRead !== undefined && !textsReadInBounds
      ? await fewRowsInBounds(source, companyId, filters, unsearched, textsRead)
      : null;
  const boundsTested = rowsInBounds !== null;
  const textsCounted = found && !boundsTested;
  // The texts' rows have no order of their own: a walk from a filter's bound on the sort column
  // is read through that column's index (see `seekBounds`), and only counted by the texts.
  const byTexts = textsCounted && !filtersBoundSortColumn;
  const shortTexts =
    search && !byTexts && !boundsTested && (texts?.length ?? 0) <= SEARCHED_TEXTS
      ? trigramTexts(search, texts)
      : null;
  const carrying =
    textsCounted && texts ? carryingTexts(source.db, companyId, filters, texts) : null;
  const datedCount =
    dated && carrying
      ? (version: number) => cachedCount(source.derived, companyId, version, carrying)
      : undefined;
  return {
    list: 'expenses',
    matching:
      byTexts && carrying
        ? carrying
        : filtered(source.db, companyId, filters, {
            rowByRow: boundsTested,
            trigramTexts: shortTexts,
          }),
    walking: filtered(source.db, companyId, filters, {
      walkedBy: EXPENSE_SORT_COLUMNS[sortField],
      rowByRow: true,
    }),
    filterIndex: byTexts
      ? null
      : filters.employeeIds
        ? 'expenses_employee_id_id'
        : dated
          ? boundsIndex(filters)
          : search
            ? null
            : 'expenses_id_list',
    // A search of any length: one or two letters are not in the trigram index, but few matches
    // are still gathered in one pass over the company's rows, where a walk in another order
    // looks each row up (a rare two-letter text walked the whole company, 1.5 s).
    selective: Boolean(filters.employeeIds || filters.search || window || filters.updatedSince),
    // Tested rows few enough that the page is gathered are read once for it and its total.
    fewMatches:
      Boolean(filters.employeeIds) || (rowsInBounds !== null && rowsInBounds <= GATHER_LIMIT),
    boundable: dated,
    filtersBoundSortColumn,
    textsInBounds:
      filtersBoundSortColumn && carrying && unsearched && textsRead !== undefined
        ? {
            matches: carrying,
            rows: unsearched,
            // A window's texts are read in the window alone, and an `updated_since`'s on
            // PostgreSQL; SQLite tests an `updated_since` in their entries of every date.
            entries: textsReadInBounds ? 0 : textsRead,
            ...(sortField === 'expense_date'
              ? { low: filters.from, high: filters.to }
              : { low: filters.updatedSince }),
          }
        : undefined,
    unsearched,
    // PostgreSQL keeps the matches' bounds: the mix's 642 searches within date bounds took as
    // long either way there (19.6–27.8 s in four runs, 21.2–24.8 s in four with these).
    boundedBy:
      byTexts && dated && unsearched && sqlite && textsRead !== undefined
        ? {
            rows: indexedBy(unsearched, boundsIndex(filters), sqlite),
            most: textsRead,
            ...(window
              ? { column: 'expense_date', low: filters.from, high: filters.to }
              : { column: 'updated_at', low: filters.updatedSince }),
          }
        : undefined,
    sampled: sampledFilterOf(
      filters,
      filters.categoryIds,
      () => keptRows(source.db, companyId, filters),
      EXPENSE_WINDOW,
    ),
    counted: datedCount ?? searchedTotal(source, companyId, filters),
    search: search
      ? byTexts
        ? 'texts'
        : !boundsTested && (shortTexts || searchedByIndex(search))
          ? 'indexed'
          : 'scanned'
      : undefined,
  };
}
