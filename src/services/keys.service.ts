import type { CompanySummary } from '../db/companies.queries.ts';
import type { Db } from '../db/database.ts';
import { type ApiKeySummary, insertApiKey, listApiKeys, revokeApiKey } from '../db/keys.queries.ts';
import { generateApiKey } from '../keys/api-key.ts';
import type { Scope } from '../keys/scopes.ts';
import { getCompany } from './companies.service.ts';
import { keyNotFound } from './errors.ts';

/** What `cdapi keys …` and the admin API's key operations share. */

export interface KeyRequest {
  companyId: number;
  name: string;
  scopes: Scope[];
  perMinute: number;
  perHour: number;
}

/** The stored key and, this once, the raw key itself: only its SHA-256 digest is kept. */
export interface CreatedKey {
  key: ApiKeySummary;
  raw: string;
  /** The key's company, as it is now (an inactive one's keys are refused until it is active). */
  company: CompanySummary;
}

export async function createKey(db: Db, request: KeyRequest): Promise<CreatedKey> {
  const company = await getCompany(db, request.companyId);
  const generated = generateApiKey();
  const key = await insertApiKey(db, {
    companyId: request.companyId,
    name: request.name,
    prefix: generated.prefix,
    hash: generated.hash,
    scopes: request.scopes,
    perMinute: request.perMinute,
    perHour: request.perHour,
  });
  return { key, raw: generated.key, company };
}

/** The company's keys, by their short prefix: never the key. */
export async function listKeys(db: Db, companyId: number): Promise<ApiKeySummary[]> {
  await getCompany(db, companyId);
  return listApiKeys(db, companyId);
}

/** Revokes a key (again: keeps the first time); it gets 401 within 2 s on every instance. */
export async function revokeKey(db: Db, keyId: number): Promise<ApiKeySummary> {
  const key = await revokeApiKey(db, keyId);
  if (!key) throw keyNotFound(keyId);
  return key;
}
