import { type Static, Type } from 'typebox';
import { EXPENSE_STATUSES } from '../domain.ts';
import {
  DateRangeParams,
  DateString,
  EmployeeSummarySchema,
  IdListParam,
  model,
  NullableString,
  NullableTimestamp,
  PageParam,
  PerPageParam,
  ref,
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

const expenseProperties = {
  id: Type.Integer(),
  status: Type.Enum([...EXPENSE_STATUSES], { type: 'string' }),
  title: Type.String(),
  description: NullableString,
  amount: Money('Decimal amount in `currency`.'),
  currency: Type.String({
    description:
      'Three capital letters, as imported: an ISO 4217 code, or one outside its list kept as the export gave it.',
    examples: ['TRY'],
  }),
  tax_amount: Money('Decimal tax included in `amount`.'),
  expense_date: DateString,
  merchant_name: Type.String(),
  payment_method: Type.String({ examples: ['corporate_card'] }),
  category: Type.Object(
    { id: Type.Integer(), name: Type.String() },
    { description: 'The category, embedded even when it is no longer active.' },
  ),
  employee: ref(EmployeeSummarySchema),
  has_receipt: Type.Boolean(),
  receipt_url: Type.Union([ReceiptOperationUrl, Type.Null()], {
    description: 'Null when the expense has no receipt image.',
  }),
  approved_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  rejected_reason: NullableString,
  submitted_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const ExpenseSchema = model(
  'Expense',
  Type.Object(expenseProperties, { description: 'An expense record, as lists show it.' }),
);
export type Expense = Static<typeof ExpenseSchema>;

export const ExpenseDetailSchema = model(
  'ExpenseDetail',
  Type.Object(
    {
      ...expenseProperties,
      items: Type.Array(
        Type.Object({
          name: Type.String(),
          quantity: Type.Number(),
          price: Money(
            'Decimal unit price in `currency`, up to 4 decimal places (finer than the currency, e.g. fuel per litre).',
          ),
        }),
      ),
      receipt: Type.Union(
        [
          Type.Object({
            url: ReceiptOperationUrl,
            processed_url: ReceiptOperationUrl,
            original_url: ReceiptOperationUrl,
          }),
          Type.Null(),
        ],
        { description: 'The receipt operation for each variant; null without a receipt image.' },
      ),
    },
    { description: 'An expense with its items and the URLs of its receipt variants.' },
  ),
);
export type ExpenseDetail = Static<typeof ExpenseDetailSchema>;

export const ExpenseListQuery = Type.Object({
  status: Type.Optional(StatusListParam(EXPENSE_STATUSES)),
  employee_id: Type.Optional(IdListParam('employee')),
  category_id: Type.Optional(IdListParam('category')),
  ...DateRangeParams(
    'Expenses with expense_date on or after this date.',
    'Expenses with expense_date on or before this date.',
  ),
  search: Type.Optional(SearchParam('Matches the title or the merchant.')),
  updated_since: Type.Optional(UpdatedSinceParam),
  sort: Type.Optional(SortParam(EXPENSE_SORT_FIELDS)),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});
export type ExpenseListQuery = Static<typeof ExpenseListQuery>;

export const ExpenseCategorySchema = model(
  'ExpenseCategory',
  Type.Object(
    {
      id: Type.Integer(),
      name: Type.String(),
      description: NullableString,
      requires_receipt: Type.Boolean(),
      max_amount: Type.Union([Type.Number({ description: 'Decimal.' }), Type.Null()]),
    },
    { description: 'An active expense category of the company.' },
  ),
);
export type ExpenseCategory = Static<typeof ExpenseCategorySchema>;
