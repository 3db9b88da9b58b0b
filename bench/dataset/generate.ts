import type { Context, DemoIds, DemoRecord } from '../../src/demo/context.ts';
import { mulberry32 } from '../../src/demo/random.ts';
import { type CompanyPlan, companyPlans, type Size } from './companies.ts';
import { type BenchEmployee, EmailBook, makeEmployee } from './employees.ts';
import { employeeExpenses, expenseCategories } from './expenses.ts';
import { employeeLeaves, leaveTypes } from './leaves.ts';
import { companyContext, proportionalShares } from './period.ts';

/**
 * The bench file's records, in import order: company by company, each with its employees, leave
 * types and categories, then its leaves and expenses. Everything comes from one PRNG seeded
 * once, so the same seed and size always give the same records.
 */

/** The first unused id of each record type; ids run on across companies. */
type NextIds = Omit<DemoIds, 'company'>;

/** Yields one company's records; returns how many leave types and categories it has. */
function* companyRecords(
  plan: CompanyPlan,
  ctx: Context,
): Generator<DemoRecord, { leaveTypes: number; categories: number }> {
  yield { type: 'company', id: plan.id, name: plan.name, timezone: plan.timezone, active: true };
  const emails = new EmailBook(plan.domain);
  const employees: BenchEmployee[] = [];
  for (let i = 0; i < plan.employees; i++) {
    const { employee, record } = makeEmployee(ctx, i, emails);
    employees.push(employee);
    yield record;
  }
  const types = leaveTypes(ctx);
  yield* types.records;
  const categories = expenseCategories(ctx);
  yield* categories.records;

  // Someone who worked longer has more leaves and expenses; all share the same density.
  const daysWorked = employees.map((e) => e.to - e.from + 1);
  let leaveId = ctx.ids.leave;
  for (const [i, count] of proportionalShares(plan.leaves, daysWorked).entries()) {
    const employee = employees[i];
    if (employee === undefined) continue;
    yield* employeeLeaves(ctx, types, employee, employees.length, count, leaveId);
    leaveId += count;
  }
  let expenseId = ctx.ids.expense;
  for (const [i, count] of proportionalShares(plan.expenses, daysWorked).entries()) {
    const employee = employees[i];
    if (employee === undefined) continue;
    yield* employeeExpenses(ctx, categories, employee, count, expenseId);
    expenseId += count;
  }
  return { leaveTypes: types.records.length, categories: categories.records.length };
}

export function* benchRecords(seed: number, size: Size): Generator<DemoRecord> {
  const rng = mulberry32(seed);
  const next: NextIds = { employee: 1, leaveType: 1, leave: 1, expenseCategory: 1, expense: 1 };
  for (const plan of companyPlans(rng, size)) {
    const ctx = companyContext(rng, { company: plan.id, ...next });
    const added = yield* companyRecords(plan, ctx);
    next.employee += plan.employees;
    next.leaveType += added.leaveTypes;
    next.leave += plan.leaves;
    next.expenseCategory += added.categories;
    next.expense += plan.expenses;
  }
}
