import type { Db } from './database.ts';
import { oneOfIds, preparedQuery } from './plan-once.ts';

/** An employee as leaves and expenses embed it. */
export interface EmbeddedEmployee {
  id: number;
  employee_number: string;
  full_name: string;
  department: string;
}

const embeddedEmployeesAmong = preparedQuery(
  (db, values: { companyId: number; ids: readonly number[] }) =>
    db
      .selectFrom('employees')
      .select(['id', 'employee_number', 'full_name', 'department'])
      .where('company_id', '=', values.companyId)
      .where(oneOfIds(db, 'id', values.ids)),
);

/**
 * The company's employees among `ids`, by id. Reads of many records at once (the change feed's
 * 1,000) look their employees up by key here instead of joining: PostgreSQL, planning the join
 * for ~800 rows, hashed all the company's employees, twice for a leave and its substitute
 * (20,000 of them: 23 ms of a page's 31).
 */
export async function employeesById(
  db: Db,
  companyId: number,
  ids: Iterable<number | null>,
): Promise<Map<number, EmbeddedEmployee>> {
  const wanted = [...new Set(ids)].filter((id): id is number => id !== null);
  if (wanted.length === 0) return new Map();
  const rows = await embeddedEmployeesAmong(db, { companyId, ids: wanted });
  return new Map(rows.map((row) => [row.id, row]));
}
