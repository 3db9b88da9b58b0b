import { ChangeSchema } from './changes.ts';
import { EmployeeSummarySchema, PaginationMetaSchema, ProblemSchema } from './common.ts';
import { EmployeeSchema } from './employees.ts';
import { ExpenseCategorySchema, ExpenseDetailSchema, ExpenseSchema } from './expenses.ts';
import { LeaveDetailSchema, LeaveSchema, LeaveTypeSchema } from './leaves.ts';
import { MeSchema } from './me.ts';

/**
 * Every shared model, in the order `components.schemas` lists them. Registered once with
 * `app.addSchema`; route schemas and other models point at them with `ref()`.
 */
export const MODELS = [
  ProblemSchema,
  PaginationMetaSchema,
  MeSchema,
  EmployeeSummarySchema,
  EmployeeSchema,
  LeaveSchema,
  LeaveDetailSchema,
  LeaveTypeSchema,
  ExpenseSchema,
  ExpenseDetailSchema,
  ExpenseCategorySchema,
  ChangeSchema,
] as const;

/** `MODELS` by `$id`, as the serializer factory takes them. */
export const modelsById = (): Record<string, unknown> =>
  Object.fromEntries(MODELS.map((model) => [(model as { $id?: string }).$id, model]));
