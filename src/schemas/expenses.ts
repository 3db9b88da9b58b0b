import { type Static, Type } from 'typebox';
import { EXPENSE_STATUSES } from '../domain.ts';
import {
  DateParam,
  DateString,
  EmployeeSummarySchema,
  IdListParam,
  NullableNumber,
  NullableString,
  NullableTimestamp,
  PageParam,
  PerPageParam,
  SearchParam,
  SortParam,
  StatusListParam,
  Timestamp,
  UpdatedSinceParam,
} from './common.ts';

export const EXPENSE_SORT_FIELDS = [
  'id',
  'expense_date',
  'amount',
  'created_at',
  'updated_at',
] as const;

const Money = (description: string) => Type.Number({ description, examples: [1250.5] });
const ReceiptOperationUrl = Type.String({
  format: 'uri',
  description: 'URL of GET /expenses/{id}/receipt, which redirects to the image.',
});

export const ExpenseSchema = Type.Object({
  id: Type.Integer(),
  status: Type.Enum([...EXPENSE_STATUSES]),
  title: Type.String(),
  description: NullableString,
  amount: Money('Decimal amount in `currency`.'),
  currency: Type.String({ description: 'ISO 4217 code.', examples: ['TRY'] }),
  tax_amount: Money('Decimal tax included in `amount`.'),
  expense_date: DateString,
  merchant_name: Type.String(),
  payment_method: Type.String({ examples: ['corporate_card'] }),
  category: Type.Object({ id: Type.Integer(), name: Type.String() }),
  employee: EmployeeSummarySchema,
  has_receipt: Type.Boolean(),
  receipt_url: Type.Union([ReceiptOperationUrl, Type.Null()]),
  approved_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  rejected_reason: NullableString,
  submitted_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Expense = Static<typeof ExpenseSchema>;

export const ExpenseDetailSchema = Type.Object({
  ...ExpenseSchema.properties,
  items: Type.Array(
    Type.Object({
      name: Type.String(),
      quantity: Type.Number(),
      price: Money('Decimal unit price.'),
    }),
  ),
  receipt: Type.Union([
    Type.Object({
      url: ReceiptOperationUrl,
      processed_url: ReceiptOperationUrl,
      original_url: ReceiptOperationUrl,
    }),
    Type.Null(),
  ]),
});
export type ExpenseDetail = Static<typeof ExpenseDetailSchema>;

export const ExpenseListQuery = Type.Object({
  status: Type.Optional(StatusListParam(EXPENSE_STATUSES)),
  employee_id: Type.Optional(IdListParam('employee')),
  category_id: Type.Optional(IdListParam('category')),
  from: Type.Optional(DateParam('Expenses with expense_date on or after this date.')),
  to: Type.Optional(DateParam('Expenses with expense_date on or before this date.')),
  search: Type.Optional(SearchParam('Matches the title or the merchant.')),
  updated_since: Type.Optional(UpdatedSinceParam),
  sort: Type.Optional(SortParam(EXPENSE_SORT_FIELDS)),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});
export type ExpenseListQuery = Static<typeof ExpenseListQuery>;

export const ExpenseCategorySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: NullableString,
  requires_receipt: Type.Boolean(),
  max_amount: NullableNumber,
});
export type ExpenseCategory = Static<typeof ExpenseCategorySchema>;
