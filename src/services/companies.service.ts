import {
  type CompanySummary,
  findCompany,
  listCompanies,
  setCompanyActive,
} from '../db/companies.queries.ts';
import type { Db } from '../db/database.ts';
import { companyNotFound } from './errors.ts';

/** What `cdapi companies …` and the admin API's /admin/companies share. */

export { listCompanies };

export async function getCompany(db: Db, id: number): Promise<CompanySummary> {
  const company = await findCompany(db, id);
  if (!company) throw companyNotFound(id);
  return company;
}

/** Activates or deactivates a company; its keys feel it within 2 s on every instance. */
export async function changeCompanyStatus(
  db: Db,
  id: number,
  active: boolean,
): Promise<CompanySummary> {
  const company = await setCompanyActive(db, id, active);
  if (!company) throw companyNotFound(id);
  return company;
}
