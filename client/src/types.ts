import type { components, paths } from './generated/openapi.ts';

type Schemas = components['schemas'];

export type Me = Schemas['Me'];
export type Employee = Schemas['Employee'];
export type Leave = Schemas['Leave'];
export type LeaveDetail = Schemas['LeaveDetail'];
export type LeaveType = Schemas['LeaveType'];
export type Expense = Schemas['Expense'];
export type ExpenseDetail = Schemas['ExpenseDetail'];
export type ExpenseCategory = Schemas['ExpenseCategory'];
export type PaginationMeta = Schemas['PaginationMeta'];
export type Problem = Schemas['Problem'];

export interface Page<T> {
  data: T[];
  meta: PaginationMeta;
}

/** The JSON body of an operation's 200 answer, as the document declares it. */
export type OkBody<P extends keyof paths> = paths[P]['get'] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

type QueryOf<P extends keyof paths> = NonNullable<paths[P]['get']['parameters']['query']>;

/** Queries as the document declares them: ids are integers, multi-value filters arrays. */
export type EmployeeQuery = QueryOf<'/employees'>;
export type LeaveQuery = QueryOf<'/leaves'>;
export type ExpenseQuery = QueryOf<'/expenses'>;

export type ReceiptVariant = NonNullable<QueryOf<'/expenses/{id}/receipt'>['variant']>;

/** A receipt image: its bytes and media type. */
export interface Receipt {
  data: Uint8Array;
  contentType: string;
}

/** The record types of the change feed, as `resources` names them. */
export type Resource = Schemas['Change']['resource'];

/** The record each resource's feed entries carry: its single-record answer, or its list item. */
export interface RecordOf {
  employee: Employee;
  leave_type: LeaveType;
  leave: LeaveDetail;
  expense_category: ExpenseCategory;
  expense: ExpenseDetail;
}

// A resource the document adds without its record above does not compile.
const everyResourceHasItsRecord: [Exclude<Resource, keyof RecordOf>] extends [never]
  ? true
  : never = true;
void everyResourceHasItsRecord;

/** One entry of `GET /changes`: the record as the API serves it now, or null for a delete. */
export type Change = {
  [R in Resource]: {
    cursor: string;
    resource: R;
    id: number;
    change: 'upsert' | 'delete';
    changed_at: string;
    record: RecordOf[R] | null;
  };
}[Resource];

export interface ChangesPage {
  data: Change[];
  meta: OkBody<'/changes'>['meta'];
}

export interface ChangesQuery {
  /** A cursor from an earlier answer; omitted = from the beginning. */
  after?: string | null | undefined;
  /** Entries a page, 1–1000 (the service's default is 100). */
  limit?: number | undefined;
  /** Default: every resource the key may read. */
  resources?: Resource[] | undefined;
}
