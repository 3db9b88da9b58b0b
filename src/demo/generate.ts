import { dayOf } from './calendar.ts';
import type { Context, DemoIds } from './context.ts';
import {
  categoryRecords,
  expenseRecord,
  expenseStatus,
  planExpenses,
  SHOWCASE_EXPENSE_STATUSES,
} from './expenses.ts';
import { leaveRecord, leaveStatus, leaveTypeRecords, planLeaves, staffOf } from './leaves.ts';
import { makeEmployee } from './people.ts';
import { mulberry32 } from './random.ts';

import { receiptFileName } from './receipt-images.ts';

export type { DemoIds } from './context.ts';

/**
 * A realistic demo company as importer records (docs/import-format.md). Everything comes from one
 * seeded PRNG and from `today`, so the same options always give the same records: demo data,
 * screenshots and tests stay stable. Records are yielded parents first, ready for the importer.
 */

export interface DemoOptions {
  /** The first id to use for each record type; the rest follow consecutively. */
  ids: DemoIds;
  employees: number;
  /** "Now" for the data: a year of leaves and expenses ends around this day. */
  today: Date;
  seed?: number;
  /**
   * How many expenses (the first whose category requires a receipt) name a receipt image,
   * `receipt-<id>.jpg`; the caller draws each from its expense (see writeExpenseReceipt).
   */
  receipts: number;
}

const DEMO_COMPANY_NAME = 'Demo Company — Anadolu Teknoloji A.Ş.';

export function* demoRecords(options: DemoOptions): Generator<Record<string, unknown>> {
  const { ids, employees: employeeCount } = options;
  if (!Number.isInteger(employeeCount) || employeeCount < 0) {
    throw new RangeError('employees must be a whole number');
  }
  const today = dayOf(options.today);
  const rng = mulberry32(options.seed ?? 1);
  const ctx: Context = { rng, ids, companyId: ids.company, today, lastDay: today - 1 };

  yield {
    type: 'company',
    id: ids.company,
    name: DEMO_COMPANY_NAME,
    timezone: 'Europe/Istanbul',
    active: true,
  };

  const emails = new Set<string>();
  const employees = Array.from({ length: employeeCount }, (_, i) =>
    makeEmployee(rng, ctx, i, ids.employee + i, emails),
  );
  for (const employee of employees) yield employee.record;
  yield* leaveTypeRecords(ctx, ids.leaveType);
  yield* categoryRecords(ctx, ids.expenseCategory);

  const staff = staffOf(employees);
  let leaveId = ids.leave;
  for (const [index, employee] of employees.entries()) {
    const showcase = index === 0;
    for (const [i, leave] of planLeaves(ctx, employee, showcase).entries()) {
      const status = leaveStatus(rng, leave, showcase ? i : null);
      yield leaveRecord(ctx, leaveId++, employee, leave, status, staff);
    }
  }

  let receipts = options.receipts;
  let expenseId = ids.expense;
  for (const [index, employee] of employees.entries()) {
    const showcase = index === 0;
    for (const [i, expense] of planExpenses(ctx, employee, showcase).entries()) {
      const forced = showcase ? SHOWCASE_EXPENSE_STATUSES[i] : undefined;
      const status = forced ?? expenseStatus(rng, ctx, expense.day);
      const id = expenseId++;
      const receipt = expense.category.requiresReceipt && receipts > 0 ? receiptFileName(id) : null;
      if (receipt) receipts -= 1;
      yield expenseRecord(ctx, id, employee, expense, status, receipt);
    }
  }
}
