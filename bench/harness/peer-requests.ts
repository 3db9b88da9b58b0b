import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../../src/schemas/common.ts';
import type { EMPLOYEE_SORT_FIELDS } from '../../src/schemas/employees.ts';
import type { EXPENSE_SORT_FIELDS } from '../../src/schemas/expenses.ts';
import type { LEAVE_SORT_FIELDS } from '../../src/schemas/leaves.ts';
import type { MixRequest } from './cold-mix.ts';

/**
 * The cold mix's requests as Platformatic DB's generated REST API asks the same question of
 * the same tables: the company as a `where.companyId.eq` filter (the peer has no keys), our
 * filters as `where.<column>.<op>`, our sort as `orderby.<column>` then `orderby.id` in the
 * same direction (our ties are broken by id), `page`/`per_page` as OFFSET/LIMIT, and
 * `totalCount=true` because our lists always carry their total. A look-up by id is asked of
 * the list route with the id and the company as filters: the peer's `/{id}` route takes no
 * filter, so it cannot check the company. The harness checks samples of every class against
 * the service (same ids in the same order, same totals) before measuring.
 */

export type PeerTranslation = { peerPath: string } | { notComparable: string };

/** Why the searches are not compared: said once, for every search the mix holds. */
export const SEARCH_NOT_COMPARABLE =
  'search folds accents and case and, for leaves, matches the employee’s name: the peer has no such filter';

interface PeerList {
  route: string;
  /** Our sort fields to the peer's (camel-cased) columns. */
  sort: Record<string, string>;
  /** Our id-list filters to the peer's columns. */
  idFilters: Record<string, string>;
  /** The date columns `from` and `to` bound (`from` ≤ column, column ≤ `to`). */
  window?: { from: string; to: string };
}

const LEAVE_SORT = {
  id: 'id',
  start_date: 'startDate',
  end_date: 'endDate',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
} satisfies Record<(typeof LEAVE_SORT_FIELDS)[number], string>;

const EXPENSE_SORT = {
  id: 'id',
  expense_date: 'expenseDate',
  amount: 'amountE4',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
} satisfies Record<(typeof EXPENSE_SORT_FIELDS)[number], string>;

/** Names sort by their folded form, as the service sorts them. */
const EMPLOYEE_SORT = {
  id: 'id',
  full_name: 'nameFolded',
  employee_number: 'numberFolded',
  hire_date: 'hireDate',
  updated_at: 'updatedAt',
} satisfies Record<(typeof EMPLOYEE_SORT_FIELDS)[number], string>;

const LISTS: Record<string, PeerList> = {
  leaves: {
    route: '/leaves',
    sort: LEAVE_SORT,
    idFilters: { employee_id: 'employeeId', leave_type_id: 'leaveTypeId' },
    // A leave is in the window when it reaches `from` and starts by `to`.
    window: { from: 'endDate', to: 'startDate' },
  },
  expenses: {
    route: '/expenses',
    sort: EXPENSE_SORT,
    idFilters: { employee_id: 'employeeId', category_id: 'categoryId' },
    window: { from: 'expenseDate', to: 'expenseDate' },
  },
  employees: { route: '/employees', sort: EMPLOYEE_SORT, idFilters: {} },
};

/** The reference lists: the company's active rows, all of them, by id. */
const REFERENCE_ROUTES: Record<string, string> = {
  '/leave-types': '/leaveTypes',
  '/expense-categories': '/expenseCategories',
};

const peerPath = (route: string, query: URLSearchParams) => ({ peerPath: `${route}?${query}` });

/** Our list query's parameters as the peer's; null for one it has no equivalent of. */
function listQuery(list: PeerList, params: URLSearchParams, query: URLSearchParams) {
  for (const [name, value] of params) {
    const idColumn = list.idFilters[name];
    if (name === 'status') query.set('where.status.in', value);
    else if (idColumn !== undefined) query.set(`where.${idColumn}.in`, value);
    else if (name === 'from' && list.window) query.set(`where.${list.window.from}.gte`, value);
    else if (name === 'to' && list.window) query.set(`where.${list.window.to}.lte`, value);
    else if (name === 'updated_since' && list.window) query.set('where.updatedAt.gte', value);
    else if (!['sort', 'page', 'per_page'].includes(name)) return { notComparable: name };
  }
  const sort = params.get('sort') ?? 'id';
  const direction = sort.startsWith('-') ? 'desc' : 'asc';
  const column = list.sort[sort.replace(/^-/, '')];
  if (column === undefined) return { notComparable: `sort=${sort}` };
  query.set(`orderby.${column}`, direction);
  if (column !== 'id') query.set('orderby.id', direction);
  const perPage = Number(params.get('per_page') ?? DEFAULT_PER_PAGE);
  const page = Number(params.get('page') ?? 1);
  query.set('limit', String(perPage));
  if (page > 1) query.set('offset', String((page - 1) * perPage));
  query.set('totalCount', 'true');
  return null;
}

/** The peer's request asking what `request` asks of the service, if it can be asked. */
export function translateRequest(request: MixRequest): PeerTranslation {
  const url = new URL(request.path, 'http://mix.invalid');
  const params = url.searchParams;
  const query = new URLSearchParams({ 'where.companyId.eq': String(request.companyId) });
  const [name = '', id, ...rest] = url.pathname.split('/').slice(1);
  const reference = REFERENCE_ROUTES[url.pathname];
  if (reference !== undefined && params.size === 0) {
    query.set('where.active.eq', 'true');
    query.set('orderby.id', 'asc');
    query.set('limit', String(MAX_PER_PAGE));
    return peerPath(reference, query);
  }
  const list = LISTS[name];
  if (list === undefined || rest.length > 0 || (id !== undefined && params.size > 0)) {
    return { notComparable: `no peer route answers ${url.pathname}${url.search}` };
  }
  if (id !== undefined) {
    query.set('where.id.eq', id);
    query.set('limit', '1');
    return peerPath(list.route, query);
  }
  if (params.has('search')) return { notComparable: SEARCH_NOT_COMPARABLE };
  const unmatched = listQuery(list, params, query);
  if (unmatched)
    return { notComparable: `the peer has no equivalent of ${unmatched.notComparable}` };
  return peerPath(list.route, query);
}
