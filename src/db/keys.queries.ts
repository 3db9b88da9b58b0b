import { nowTimestamp } from '../time.ts';
import type { Db } from './database.ts';

export interface ApiKeySummary {
  id: number;
  company_id: number;
  name: string;
  prefix: string;
  scopes: string[];
  per_minute: number;
  per_hour: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewKeyInput {
  companyId: number;
  name: string;
  prefix: string;
  hash: string;
  scopes: string[];
  perMinute: number;
  perHour: number;
}

const SUMMARY_COLUMNS = [
  'id',
  'company_id',
  'name',
  'prefix',
  'scopes',
  'per_minute',
  'per_hour',
  'created_at',
  'last_used_at',
  'revoked_at',
] as const;

const toSummary = (row: Omit<ApiKeySummary, 'scopes'> & { scopes: string }): ApiKeySummary => ({
  ...row,
  scopes: row.scopes.split(','),
});

export async function insertApiKey(db: Db, input: NewKeyInput): Promise<ApiKeySummary> {
  const row = await db
    .insertInto('api_keys')
    .values({
      company_id: input.companyId,
      name: input.name,
      prefix: input.prefix,
      key_hash: input.hash,
      scopes: input.scopes.join(','),
      per_minute: input.perMinute,
      per_hour: input.perHour,
      created_at: nowTimestamp(),
    })
    .returning(SUMMARY_COLUMNS)
    .executeTakeFirstOrThrow();
  return toSummary(row);
}

export async function listApiKeys(db: Db, companyId: number): Promise<ApiKeySummary[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(SUMMARY_COLUMNS)
    .where('company_id', '=', companyId)
    .orderBy('id')
    .execute();
  return rows.map(toSummary);
}

/** Marks a key revoked; returns null for an unknown id. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, keyId: number): Promise<ApiKeySummary | null> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: nowTimestamp() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  const row = await db
    .selectFrom('api_keys')
    .select(SUMMARY_COLUMNS)
    .where('id', '=', keyId)
    .executeTakeFirst();
  return row ? toSummary(row) : null;
}
