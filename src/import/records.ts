import type {
  NewCompany,
  NewEmployee,
  NewExpense,
  NewExpenseCategory,
  NewLeave,
  NewLeaveType,
} from '../db/database.ts';
import { DURATION_TYPES, EMPLOYEE_STATUSES, EXPENSE_STATUSES, LEAVE_STATUSES } from '../domain.ts';
import { fold } from '../fold.ts';
import { currencyFractionDigits } from '../money.ts';
import { FieldError, FieldReader, LONG_TEXT_MAX } from './fields.ts';

/**
 * Turns one parsed NDJSON object into the rows it stands for (PRODUCT.md §5), or throws a
 * FieldError naming the first bad field. Pure: references to other records are checked by
 * the importer, which knows what the file and the database hold.
 */

export const RECORD_TYPES = [
  'company',
  'employee',
  'leave_type',
  'leave',
  'expense_category',
  'expense',
] as const;

const MAX_ATTACHMENTS = 100;
const MAX_ITEMS = 500;

export interface ItemInput {
  position: number;
  name: string;
  quantity: number;
  price_e4: number;
}

export type ParsedRecord =
  | { type: 'company'; row: NewCompany }
  | { type: 'employee'; row: NewEmployee }
  | { type: 'leave_type'; row: NewLeaveType }
  | { type: 'leave'; row: NewLeave; attachments: string[] }
  | { type: 'expense_category'; row: NewExpenseCategory }
  | { type: 'expense'; row: NewExpense; items: ItemInput[]; receiptPath: string | null };

const flag = (value: boolean): 0 | 1 => (value ? 1 : 0);

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function parseCompany(r: FieldReader): ParsedRecord {
  const timezone = r.text('timezone', 64);
  if (!isTimeZone(timezone)) throw r.fail('timezone', 'is not an IANA time-zone name');
  return {
    type: 'company',
    row: { id: r.id('id'), name: r.text('name'), timezone, active: flag(r.boolean('active')) },
  };
}

function parseEmployee(r: FieldReader): ParsedRecord {
  const firstName = r.text('first_name');
  const lastName = r.text('last_name');
  const employeeNumber = r.text('employee_number', 50);
  const fullName = `${firstName} ${lastName}`;
  return {
    type: 'employee',
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_number: employeeNumber,
      first_name: firstName,
      last_name: lastName,
      full_name: fullName,
      email: r.email('email'),
      department: r.text('department'),
      position: r.text('position'),
      status: r.oneOf('status', EMPLOYEE_STATUSES),
      hire_date: r.date('hire_date'),
      national_id: r.optionalText('national_id', 64),
      salary_e4: r.optionalMoney('salary'),
      iban: r.optionalText('iban', 64),
      address: r.optionalText('address', LONG_TEXT_MAX),
      name_folded: fold(fullName),
      number_folded: fold(employeeNumber),
    },
  };
}

function parseLeaveType(r: FieldReader): ParsedRecord {
  return {
    type: 'leave_type',
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      name: r.text('name'),
      type_key: r.code('type_key'),
      description: r.optionalText('description'),
      max_days_per_year: r.integer('max_days_per_year', 0, 366),
      quota_type: r.code('quota_type'),
      requires_document: flag(r.boolean('requires_document')),
      affects_annual_balance: flag(r.boolean('affects_annual_balance')),
      active: flag(r.boolean('active')),
    },
  };
}

function parseLeave(r: FieldReader): ParsedRecord {
  const startDate = r.date('start_date');
  const endDate = r.date('end_date');
  if (endDate < startDate) throw r.fail('end_date', 'must not be before start_date');
  const durationType = r.oneOf('duration_type', DURATION_TYPES);
  let startTime: string | null = null;
  let endTime: string | null = null;
  let hours: number | null = null;
  if (durationType === 'hourly') {
    startTime = r.time('start_time');
    endTime = r.time('end_time');
    if (endTime <= startTime) throw r.fail('end_time', 'must be after start_time');
    hours = r.number('hours', 0, 24);
  } else {
    for (const field of ['start_time', 'end_time', 'hours']) {
      r.mustBeNull(field, 'must be null unless duration_type is hourly');
    }
  }
  const doc = r.optionalNested('document');
  const attachments = doc
    ? doc
        .array('attachments', MAX_ATTACHMENTS)
        .map((entry, i) => doc.nested(`attachments[${i}]`, entry).text('file_name'))
    : [];
  return {
    type: 'leave',
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_id: r.id('employee_id'),
      leave_type_id: r.id('leave_type_id'),
      status: r.oneOf('status', LEAVE_STATUSES),
      start_date: startDate,
      end_date: endDate,
      days: r.number('days', 0, 366),
      duration_type: durationType,
      start_time: startTime,
      end_time: endTime,
      hours,
      reason: r.optionalText('reason'),
      rejection_reason: r.optionalText('rejection_reason'),
      substitute_employee_id: r.optionalId('substitute_employee_id'),
      approved_at: r.optionalTimestamp('approved_at'),
      created_at: r.timestamp('created_at'),
      updated_at: r.timestamp('updated_at'),
      document_deadline: doc?.optionalDate('deadline') ?? null,
      document_obligation_status: doc?.optionalCode('obligation_status') ?? null,
    },
    attachments,
  };
}

function parseExpenseCategory(r: FieldReader): ParsedRecord {
  return {
    type: 'expense_category',
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      name: r.text('name'),
      description: r.optionalText('description'),
      requires_receipt: flag(r.boolean('requires_receipt')),
      max_amount_e4: r.optionalMoney('max_amount'),
      active: flag(r.boolean('active')),
    },
  };
}

function parseExpense(r: FieldReader): ParsedRecord {
  const currency = r.currency('currency');
  const digits = currencyFractionDigits(currency);
  const title = r.text('title');
  const merchantName = r.text('merchant_name');
  const items = r.array('items', MAX_ITEMS).map((entry, position) => {
    const item = r.nested(`items[${position}]`, entry);
    return {
      position,
      name: item.text('name'),
      quantity: item.number('quantity', 0, 1_000_000),
      // A unit price (fuel per litre) may be finer than the currency: up to 4 places in any.
      price_e4: item.money('price'),
    };
  });
  const receiptPath = r.optionalNested('receipt')?.text('original', 1024) ?? null;
  return {
    type: 'expense',
    row: {
      id: r.id('id'),
      company_id: r.id('company_id'),
      employee_id: r.id('employee_id'),
      category_id: r.id('category_id'),
      status: r.oneOf('status', EXPENSE_STATUSES),
      title,
      description: r.optionalText('description'),
      amount_e4: r.money('amount', digits),
      currency,
      tax_amount_e4: r.money('tax_amount', digits),
      expense_date: r.date('expense_date'),
      merchant_name: merchantName,
      payment_method: r.code('payment_method'),
      approved_at: r.optionalTimestamp('approved_at'),
      paid_at: r.optionalTimestamp('paid_at'),
      rejected_reason: r.optionalText('rejected_reason'),
      submitted_at: r.timestamp('submitted_at'),
      created_at: r.timestamp('created_at'),
      updated_at: r.timestamp('updated_at'),
      title_folded: fold(title),
      merchant_folded: fold(merchantName),
    },
    items,
    receiptPath,
  };
}

const parsers: Record<(typeof RECORD_TYPES)[number], (r: FieldReader) => ParsedRecord> = {
  company: parseCompany,
  employee: parseEmployee,
  leave_type: parseLeaveType,
  leave: parseLeave,
  expense_category: parseExpenseCategory,
  expense: parseExpense,
};

export function parseRecord(value: unknown): ParsedRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FieldError('(record)', 'must be a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || !(RECORD_TYPES as readonly string[]).includes(type)) {
    throw new FieldError('type', `must be one of ${RECORD_TYPES.join(', ')}`);
  }
  return parsers[type as (typeof RECORD_TYPES)[number]](
    new FieldReader(value as Record<string, unknown>),
  );
}
