import type { Db } from '../db/database.ts';
import { listExpenses, type ReceiptUrls } from '../db/expenses.queries.ts';
import { listLeaves } from '../db/leaves.queries.ts';
import { EXPENSE_SORT_FIELDS } from '../schemas/expenses.ts';
import { LEAVE_SORT_FIELDS } from '../schemas/leaves.ts';
import { type ApiDeps, listSourceOf } from './deps.ts';

/** At most this many companies' lists are read before the service listens. */
const WARMED_COMPANIES = 4;

/**
 * The active companies whose lists are long enough to have samples (`list_sample_sets`), the
 * most records first, at most `most` of them.
 */
async function longestListCompanies(db: Db, most: number): Promise<number[]> {
  const sets = await db
    .selectFrom('list_sample_sets as s')
    .innerJoin('companies as c', 'c.id', 's.company_id')
    .select(['s.company_id', 's.totals'])
    .where('c.active', '=', 1)
    .execute();
  const records = new Map<number, number>();
  for (const set of sets) {
    const totals: number[] = JSON.parse(set.totals);
    const sum = totals.reduce((all, rows) => all + rows, 0);
    records.set(set.company_id, (records.get(set.company_id) ?? 0) + sum);
  }
  return [...records]
    .sort(([a, rowsOfA], [b, rowsOfB]) => rowsOfB - rowsOfA || a - b)
    .slice(0, most)
    .map(([companyId]) => companyId);
}

/** What `warmLists` read: the companies, and the employees held once it had. */
export interface WarmedLists {
  companies: number[];
  employees: number;
}

/** The warm-up reads one record a page and builds no answer: no receipt URL is wanted. */
const NO_RECEIPT_URLS: ReceiptUrls = { receiptUrl: () => '' };

/**
 * Reads the first record of the longest companies' leaves and expenses in every sort order,
 * as their first requests would, and waits for the employees their pages embed. A company's
 * first list page after a restart loads what every later one shares: the list's samples
 * (each sort column's), and in the background all its employees (`EmployeeDirectories`: 20
 * statements for the bench company's 20,000, which took the pool's connections and the event
 * loop from the requests beside them). The first eight requests of the cold mix, sent at
 * once to a new process, took 448–546 ms on PostgreSQL, 306–362 ms after this
 * (docs/performance.md, item 101). Returns the companies read, and how many employees the
 * copies hold then.
 */
export async function warmLists(deps: ApiDeps): Promise<WarmedLists> {
  const companies = await longestListCompanies(deps.db, WARMED_COMPANIES);
  const page = { page: 1, perPage: 1 };
  for (const companyId of companies) {
    const version = await deps.dataVersions.of(companyId);
    const source = listSourceOf(deps, async () => version);
    for (const field of LEAVE_SORT_FIELDS) {
      await listLeaves(source, companyId, {}, { field, direction: 'asc' }, page);
    }
    for (const field of EXPENSE_SORT_FIELDS) {
      const sort = { field, direction: 'asc' } as const;
      await listExpenses(source, companyId, {}, sort, page, NO_RECEIPT_URLS);
    }
  }
  await deps.listCaches.employees.settled();
  return { companies, employees: deps.listCaches.employees.heldEmployees() };
}
