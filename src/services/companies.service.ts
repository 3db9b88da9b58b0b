import { type PurgeSummary, purgeCompany } from '../companies/purge.ts';
import {
  type CompanySummary,
  findCompany,
  listCompanies,
  setCompanyActive,
} from '../db/companies.queries.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { companyNotFound, ServiceError } from './errors.ts';

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

/**
 * Purges the company with all its records, keys and receipt files, once `confirmation` (the
 * CLI's `--confirm`, the admin API's `confirm`) repeats its id: nothing can bring it back.
 */
export async function purgeConfirmedCompany(
  handle: DatabaseHandle,
  store: ReceiptStore,
  id: number,
  confirmation: { field: string; value: string | number },
): Promise<PurgeSummary> {
  // An unknown company is that, whatever the confirmation says.
  if (!(await findCompany(handle.db, id))) throw companyNotFound(id);
  if (String(confirmation.value) !== String(id)) {
    throw new ServiceError(
      'invalid',
      `${confirmation.field} must repeat the company id (${id}) to purge it`,
      confirmation.field,
    );
  }
  const summary = await purgeCompany(handle, store, id);
  if (!summary) throw companyNotFound(id);
  return summary;
}
