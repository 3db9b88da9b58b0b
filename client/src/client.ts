import { ApiError } from './errors.ts';
import { checkedReceipt } from './receipt-check.ts';
import { sleep } from './sleep.ts';
import { type CallOptions, drain, type QueryValue, Transport, type Wait } from './transport.ts';
import type {
  Change,
  ChangesPage,
  ChangesQuery,
  Employee,
  EmployeeQuery,
  Expense,
  ExpenseCategory,
  ExpenseDetail,
  ExpenseQuery,
  Leave,
  LeaveDetail,
  LeaveQuery,
  LeaveType,
  Me,
  OkBody,
  Page,
  Receipt,
  ReceiptVariant,
} from './types.ts';

export interface ClientOptions {
  /** The API base, e.g. `https://api.example.com/api/company/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Retries of a 429, a 503 or a network failure before the call fails (default 5). */
  maxRetries?: number;
  /** Milliseconds one attempt may take (default 30 000). */
  timeoutMs?: number;
  /**
   * Ask for compressed answers (default true). On the same machine or a fast LAN, false saves
   * the service and the client the CPU of compressing large pages.
   */
  compress?: boolean;
  /** Hears every wait before it starts: pacing by `RateLimit`, or a retry's delay. */
  onWait?: (wait: Wait) => void;
}

/** The list operations of one resource. */
export interface ListResource<Item, Detail, Query> {
  /** One page: `{data, meta}`. */
  list(query?: Query, options?: CallOptions): Promise<Page<Item>>;
  /** One record by id; a record of another company is a 404 ApiError. */
  get(id: number, options?: CallOptions): Promise<Detail>;
  /**
   * Every record matching `query`, page after page from the first (100 a page unless
   * `per_page` says): it takes no `page`.
   */
  all(query?: Omit<Query, 'page'>, options?: CallOptions): AsyncGenerator<Item>;
}

export interface FollowOptions extends ChangesQuery, CallOptions {
  /**
   * Without it the iteration ends once the feed is caught up (`has_more` false). With it, the
   * feed is polled every `pollIntervalMs` for new entries until `signal` aborts.
   */
  pollIntervalMs?: number | undefined;
}

export interface Client {
  me(options?: CallOptions): Promise<Me>;
  employees: ListResource<Employee, Employee, EmployeeQuery>;
  leaves: ListResource<Leave, LeaveDetail, LeaveQuery>;
  expenses: ListResource<Expense, ExpenseDetail, ExpenseQuery> & {
    /** The receipt image, following the signed redirect (processed variant by default). */
    receipt(
      id: number,
      options?: CallOptions & { variant?: ReceiptVariant | undefined },
    ): Promise<Receipt>;
  };
  leaveTypes(options?: CallOptions): Promise<LeaveType[]>;
  expenseCategories(options?: CallOptions): Promise<ExpenseCategory[]>;
  changes: {
    /** One page of the change feed. */
    list(query?: ChangesQuery, options?: CallOptions): Promise<ChangesPage>;
    /** Every entry after `after`, in commit order. */
    follow(options?: FollowOptions): AsyncGenerator<Change>;
  };
}

function validId(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1) throw new TypeError(`id must be a positive integer`);
  return String(id);
}

function listResource<Item, Detail, Query>(
  transport: Transport,
  path: string,
): ListResource<Item, Detail, Query> {
  const list = (query?: Query, options?: CallOptions) =>
    transport.getJson<Page<Item>>(path, query as Record<string, QueryValue>, options);
  return {
    list,
    async get(id, options) {
      const body = await transport.getJson<{ data: Detail }>(
        `${path}/${validId(id)}`,
        undefined,
        options,
      );
      return body.data;
    },
    async *all(query, options) {
      const perPage = (query as { per_page?: number } | undefined)?.per_page ?? 100;
      for (let page = 1; ; page++) {
        const answer = await list({ ...query, page, per_page: perPage } as Query, options);
        yield* answer.data;
        if (answer.data.length === 0 || page >= answer.meta.last_page) return;
      }
    },
  };
}

/** A client of the Company Data API for one key. */
export function createClient(options: ClientOptions): Client {
  const transport = new Transport({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    maxRetries: options.maxRetries ?? 5,
    timeoutMs: options.timeoutMs ?? 30_000,
    compress: options.compress ?? true,
    onWait: options.onWait,
  });
  const expenses = listResource<Expense, ExpenseDetail, ExpenseQuery>(transport, '/expenses');
  const changesPage = (query: ChangesQuery = {}, call?: CallOptions) =>
    transport.getJson<ChangesPage>(
      '/changes',
      { after: query.after ?? undefined, limit: query.limit, resources: query.resources },
      call,
    );
  return {
    me: (call) => transport.getJson<OkBody<'/me'>>('/me', undefined, call),
    employees: listResource(transport, '/employees'),
    leaves: listResource(transport, '/leaves'),
    expenses: {
      ...expenses,
      async receipt(id, call = {}) {
        const path = `/expenses/${validId(id)}/receipt`;
        for (let redirects = 1; ; redirects++) {
          const redirect = await transport.get(path, { variant: call.variant }, call, {
            redirect: 'manual',
          });
          await drain(redirect);
          const location = redirect.headers.get('location');
          if (location === null) throw new Error('the receipt redirect carries no Location');
          try {
            // The signed URL needs no key; a presigned store URL would refuse one.
            return await transport.getBody(
              new URL(location, transport.baseUrl).href,
              undefined,
              call,
              (file) => checkedReceipt(file, call.variant ?? 'processed'),
              { withKey: false },
            );
          } catch (error) {
            // A link that expired meanwhile (retries of a failing network can outlast it):
            // a fresh one, once.
            const expired = error instanceof ApiError && error.code === 'invalid_signature';
            if (!expired || redirects >= 2) throw error;
          }
        }
      },
    },
    leaveTypes: async (call) =>
      (await transport.getJson<OkBody<'/leave-types'>>('/leave-types', undefined, call)).data,
    expenseCategories: async (call) =>
      (
        await transport.getJson<OkBody<'/expense-categories'>>(
          '/expense-categories',
          undefined,
          call,
        )
      ).data,
    changes: {
      list: changesPage,
      async *follow(follow = {}) {
        let after = follow.after ?? null;
        for (;;) {
          const page = await changesPage({ ...follow, after }, follow);
          for (const change of page.data) {
            // Aborted while the caller held an entry: the rest of the page is not handed out.
            follow.signal?.throwIfAborted();
            yield change;
          }
          after = page.meta.next_cursor ?? after;
          if (page.meta.has_more && page.data.length > 0) continue;
          if (follow.pollIntervalMs === undefined) return;
          await sleep(follow.pollIntervalMs, follow.signal);
        }
      },
    },
  };
}
