import { type SelectQueryBuilder, sql } from 'kysely';
import type { LeaveStatus } from '../domain.ts';
import { chunks } from './chunks.ts';
import type { Database, Db, EmployeesTable } from './database.ts';

/**
 * How many leaves each employee of a company has in each status (`leave_counts`, migration
 * 0010), kept by the import for every company it changed. A leave search finds employees (by
 * name or personnel number), so its total, with no filter but statuses, is a sum over the
 * employees it finds, a few rows each: counting their leaves read every one of them
 * (`/leaves?search=e` finds 15,589 of the bench company's 20,000 employees and their 777,252
 * leaves: such counts took 92 ms on average and up to 384 ms on PostgreSQL under the cold mix).
 */
export async function refreshLeaveCounts(trx: Db, companyIds: readonly number[]): Promise<void> {
  for (const chunk of chunks(companyIds)) {
    await trx.deleteFrom('leave_counts').where('company_id', 'in', chunk).execute();
    await trx
      .insertInto('leave_counts')
      .columns(['company_id', 'employee_id', 'status', 'leaves'])
      .expression((eb) =>
        eb
          .selectFrom('leaves')
          .select(['company_id', 'employee_id', 'status', sql<number>`count(*)`.as('leaves')])
          .where('company_id', 'in', chunk)
          .groupBy(['company_id', 'employee_id', 'status']),
      )
      .execute();
  }
}

/** The company's employees a search found: their ids, or a query that selects them. */
export type FoundEmployees =
  | readonly number[]
  | SelectQueryBuilder<Database & { e: EmployeesTable }, 'e', { id: number }>;

/** How many leaves of these statuses (of any when none) the employees found have. */
export async function countLeavesOf(
  db: Db,
  companyId: number,
  employees: FoundEmployees,
  status?: readonly LeaveStatus[],
): Promise<number> {
  let query = db
    .selectFrom('leave_counts as c')
    .select(sql<number | string | null>`sum(c.leaves)`.as('total'))
    .where('c.company_id', '=', companyId)
    .where('c.employee_id', 'in', employees);
  if (status) query = query.where('c.status', 'in', status);
  const row = await query.executeTakeFirst();
  return Number(row?.total ?? 0);
}
