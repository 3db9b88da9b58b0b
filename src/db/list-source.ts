import type { CompiledQuery } from 'kysely';
import type { Db } from './database.ts';
import type { DerivedCache } from './derived-cache.ts';
import type { EmployeeDirectories } from './embedded-employees.ts';
import type { LoadedSamples } from './list-samples-load.ts';
import type { Chain } from './sqlite-readers.ts';

/** What a list is read with: the request's page and order, the database and shared caches. */

/** A list's order: an API sort field and its direction (`id` breaks ties the same way). */
export interface SortOrder<F extends string> {
  field: F;
  direction: 'asc' | 'desc';
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/** How many rows come before a page. */
export const offsetOf = ({ page, perPage }: PageRequest): number => (page - 1) * perPage;

/** The sort key and id of one row of an ordered list. */
export interface Anchor {
  value: unknown;
  id: number;
}

/**
 * The anchors of one list in one direction: the sort key and id of the rows at positions
 * ANCHOR_INTERVAL, 2 × ANCHOR_INTERVAL, …, made as far as a page has needed them.
 */
export interface AnchorRun {
  anchors: Anchor[];
  /** Whether the list has no more anchors than these. */
  complete: boolean;
  /** The extension under way, which a later one waits for. */
  extending: Promise<void>;
}

/** The caches of values derived from companies' data, shared by every request. */
export interface ListCaches {
  /** List totals and other numbers. */
  derived: DerivedCache<number>;
  /** Page anchors of long lists, each made as far as a page has needed. */
  anchors: DerivedCache<AnchorRun>;
  /** The list samples of companies' long lists (null: none for that data version). */
  samples: DerivedCache<LoadedSamples>;
  /** The lowest and highest sort value among a filter's matches (see `listPage`). */
  bounds: DerivedCache<SortBounds | null>;
  /** Companies' employees as pages of leaves and expenses embed them. */
  employees: EmployeeDirectories;
}

/**
 * The lowest and highest value of the sort column among a list's rows; one of them is
 * undefined when only the other end was asked for (see `sortBounds` in sort-bounds.ts).
 */
export interface SortBounds {
  min: unknown;
  max: unknown;
}

/** What one request's list queries read from. */
export interface ListSource extends ListCaches {
  db: Db;
  /**
   * The company's data version, read at most once per request. Cached values are computed
   * after it is read, so none is older than the version it is kept under.
   */
  version(): Promise<number>;
  /**
   * Runs a chain of one-row queries where the database is (see `Chain`); without it each link
   * is a query of its own.
   */
  chain?(query: CompiledQuery, chain: Chain): Promise<unknown[]>;
}

/** An order over a list: a column, then the id as tie-breaker, both in one direction. */
export interface ListOrder {
  /** Qualified column, e.g. `l.start_date`; the id column itself for the default order. */
  column: string;
  id: string;
  direction: 'asc' | 'desc';
}
