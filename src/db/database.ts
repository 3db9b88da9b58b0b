import type { ColumnType, Generated, Insertable, Kysely, Selectable } from 'kysely';
import type { DurationType, EmployeeStatus, ExpenseStatus, LeaveStatus } from '../domain.ts';

/**
 * Table types, one interface per table, collected in `Database`.
 *
 * Storage conventions shared by SQLite and PostgreSQL:
 * - Money columns end in `_e4` and hold the amount in ten-thousandths as an integer
 *   (19.99 is 199900), so no value ever passes through a binary float.
 * - Dates are `YYYY-MM-DD` strings, timestamps `YYYY-MM-DDTHH:MM:SSZ` strings (UTC); the
 *   PostgreSQL driver is set up to hand native date/timestamptz values back in that form.
 * - Flags are written as 0/1 (PostgreSQL accepts those for boolean) and read as boolean or 0/1.
 * - `*_folded` columns hold the case- and accent-folded text that search and text sorting use.
 */

/**
 * The company's import number that last changed a record row (migration 0008): the change
 * feed's order. The importer sets it; parsers leave it out.
 */
export type ChangeSeq = Generated<number>;

export type Flag = ColumnType<boolean | 0 | 1, 0 | 1, 0 | 1>;
export type DateString = string;
export type Timestamp = string;

export interface CompaniesTable {
  id: number;
  name: string;
  timezone: string;
  active: Flag;
  /** Incremented by every import that touches the company (migration 0002). */
  data_version: Generated<number>;
  /** The number of the company's latest import that wrote to it (migration 0008). */
  change_seq: Generated<number>;
  /**
   * The position of the newest forgotten deletion (its import's number, resource rank and
   * record id; migrations 0008 and 0011): every deletion of an import up to that number is
   * forgotten. Its number is the point a cursor carries (src/db/changes.queries.ts); the whole
   * position is what instances of releases before migration 0015 compare cursors with.
   */
  changes_forgotten_seq: Generated<number>;
  changes_forgotten_resource: Generated<number>;
  changes_forgotten_id: Generated<number>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  company_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  per_minute: number;
  per_hour: number;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface EmployeesTable {
  id: number;
  company_id: number;
  employee_number: string;
  first_name: string;
  last_name: string;
  full_name: string;
  email: string;
  department: string;
  position: string;
  status: EmployeeStatus;
  hire_date: DateString;
  national_id: string | null;
  salary_e4: number | null;
  iban: string | null;
  address: string | null;
  name_folded: string;
  number_folded: string;
  /**
   * The import record's, else the time of the import that last changed the row's served
   * columns (null in a parsed row: the importer writes the import's time).
   */
  updated_at: ColumnType<Timestamp, Timestamp | null, Timestamp>;
  change_seq: ChangeSeq;
}

export interface LeaveTypesTable {
  id: number;
  company_id: number;
  name: string;
  type_key: string;
  description: string | null;
  max_days_per_year: number;
  quota_type: string;
  requires_document: Flag;
  affects_annual_balance: Flag;
  active: Flag;
  change_seq: ChangeSeq;
}

export interface LeavesTable {
  id: number;
  company_id: number;
  employee_id: number;
  leave_type_id: number;
  status: LeaveStatus;
  start_date: DateString;
  end_date: DateString;
  days: number;
  duration_type: DurationType;
  start_time: string | null;
  end_time: string | null;
  hours: number | null;
  reason: string | null;
  rejection_reason: string | null;
  substitute_employee_id: number | null;
  approved_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  document_deadline: DateString | null;
  document_obligation_status: string | null;
  children_digest: string | null;
  change_seq: ChangeSeq;
}

export interface LeaveAttachmentsTable {
  id: Generated<number>;
  company_id: number;
  leave_id: number;
  file_name: string;
}

export interface ExpenseCategoriesTable {
  id: number;
  company_id: number;
  name: string;
  description: string | null;
  requires_receipt: Flag;
  max_amount_e4: number | null;
  active: Flag;
  change_seq: ChangeSeq;
}

export interface ExpensesTable {
  id: number;
  company_id: number;
  employee_id: number;
  category_id: number;
  status: ExpenseStatus;
  title: string;
  description: string | null;
  amount_e4: number;
  currency: string;
  tax_amount_e4: number;
  expense_date: DateString;
  merchant_name: string;
  payment_method: string;
  approved_at: Timestamp | null;
  paid_at: Timestamp | null;
  rejected_reason: string | null;
  submitted_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  title_folded: string;
  merchant_folded: string;
  children_digest: string | null;
  change_seq: ChangeSeq;
}

export interface ExpenseItemsTable {
  id: Generated<number>;
  company_id: number;
  expense_id: number;
  position: number;
  name: string;
  quantity: number;
  price_e4: number;
}

/** One row per expense that has a receipt; the files themselves live in the receipt store. */
export interface ReceiptsTable {
  expense_id: number;
  company_id: number;
  original_key: string;
  original_content_type: string;
  original_size: number;
  original_sha256: string;
  processed_key: string;
  processed_size: number;
}

/** Per company and long list, the samples' groups and totals at one data version (0006). */
export interface ListSampleSetsTable {
  company_id: number;
  list: string;
  data_version: number;
  /** JSON: `[status, group id]` of each group, in group order. */
  groups: string;
  /** JSON: the rows of each group. */
  totals: string;
  /** Leaves only: the longest leave, in whole days from its start date to its end date. */
  longest_leave_days: number | null;
}

/** Every 1,000th row of a long list in one sort order (see src/db/sampled-lists.ts). */
export interface ListSamplesTable {
  company_id: number;
  list: string;
  sort_column: string;
  seq: number;
  /** JSON: the row's sort value. */
  sort_value: string;
  id: number;
  /** JSON: the rows of each group up to and including this one. */
  counts: string;
}

/**
 * Per sort order and date column of a sampled list, the rows of each status up to every 4th
 * sample dated in each month (0013): `counts` is little-endian int32, sample × month × status,
 * each cumulative over samples and months.
 */
export interface ListSampleMonthsTable {
  company_id: number;
  list: string;
  sort_column: string;
  date_column: string;
  /** The first month counted, as year × 12 + month − 1. */
  first_month: number;
  months: number;
  /** JSON: the statuses counted, in the order of the counts. */
  statuses: string;
  counts: Uint8Array;
}

/** The distinct searched texts of a company's expenses, with how many carry each (0006). */
export interface ExpenseTextsTable {
  company_id: number;
  status: ExpenseStatus;
  category_id: number;
  title_folded: string;
  merchant_folded: string;
  expenses: number;
}

/** Each employee's leaves of each status, kept by the import (migration 0010). */
export interface LeaveCountsTable {
  company_id: number;
  employee_id: number;
  status: LeaveStatus;
  leaves: number;
}

/** Running totals of `cdapi import` runs, one row per outcome (migrations 0007, 0016). */
export interface ImportStatsTable {
  /** `empty`: the run succeeded and held no record (an export that arrived empty). */
  outcome: 'succeeded' | 'failed' | 'empty';
  runs: number;
  records: number;
  duration_ms: number;
  last_duration_ms: number | null;
  /** Unix time in milliseconds. */
  last_finished_ms: number | null;
}

/** The commit time of each company import that changed something (migration 0008). */
export interface ChangeCommitsTable {
  company_id: number;
  change_seq: number;
  committed_at: Timestamp;
}

/** A deleted record, remembered for the change feed until it is forgotten (migration 0008). */
export interface DeletedRecordsTable {
  company_id: number;
  /** The resource's number in the feed's order (`FEED_RESOURCES`, src/db/changes.queries.ts). */
  resource: number;
  record_id: number;
  change_seq: number;
}

/** The newest forgotten deletion of each resource of a company's feed (migration 0015). */
export interface ChangesForgottenTable {
  company_id: number;
  /** The resource's number in the feed's order. */
  resource: number;
  change_seq: number;
  record_id: number;
}

/** The numbers a purged company had reached (migration 0017): a company of its id goes on from them. */
export interface PurgedCompaniesTable {
  company_id: number;
  data_version: number;
  /** The purge's own number in the company's change feed: one past its last import's. */
  change_seq: number;
}

export interface Database {
  companies: CompaniesTable;
  api_keys: ApiKeysTable;
  employees: EmployeesTable;
  leave_types: LeaveTypesTable;
  leaves: LeavesTable;
  leave_attachments: LeaveAttachmentsTable;
  expense_categories: ExpenseCategoriesTable;
  expenses: ExpensesTable;
  expense_items: ExpenseItemsTable;
  receipts: ReceiptsTable;
  list_sample_sets: ListSampleSetsTable;
  list_samples: ListSamplesTable;
  list_sample_months: ListSampleMonthsTable;
  expense_texts: ExpenseTextsTable;
  leave_counts: LeaveCountsTable;
  import_stats: ImportStatsTable;
  change_commits: ChangeCommitsTable;
  deleted_records: DeletedRecordsTable;
  changes_forgotten: ChangesForgottenTable;
  purged_companies: PurgedCompaniesTable;
}

export type Db = Kysely<Database>;

export type Company = Selectable<CompaniesTable>;
export type NewCompany = Insertable<CompaniesTable>;
export type NewEmployee = Insertable<EmployeesTable>;
export type NewLeaveType = Insertable<LeaveTypesTable>;
export type NewLeave = Insertable<LeavesTable>;
export type NewExpenseCategory = Insertable<ExpenseCategoriesTable>;
export type NewExpense = Insertable<ExpensesTable>;
export type NewReceipt = Insertable<ReceiptsTable>;
