import { nowTimestamp } from '../time.ts';
import type { Db } from './database.ts';
import { preparedQuery } from './plan-once.ts';

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

export interface KeyForAuth {
  keyId: number;
  keyName: string;
  scopes: string[];
  perMinute: number;
  perHour: number;
  revoked: boolean;
  lastUsedAt: string | null;
  company: { id: number; name: string; timezone: string; active: boolean };
}

const keyByHash = preparedQuery((db, values: { hash: string }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('companies', 'companies.id', 'api_keys.company_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.name as keyName',
      'api_keys.scopes',
      'api_keys.per_minute',
      'api_keys.per_hour',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'companies.id as companyId',
      'companies.name as companyName',
      'companies.timezone',
      'companies.active',
    ])
    .where('api_keys.key_hash', '=', values.hash),
);

/** The key with this SHA-256 digest and its company, revoked or not; null when none has it. */
export async function findKeyForAuth(db: Db, hash: string): Promise<KeyForAuth | null> {
  const [row] = await keyByHash(db, { hash });
  if (!row) return null;
  return {
    keyId: row.keyId,
    keyName: row.keyName,
    scopes: row.scopes.split(','),
    perMinute: row.per_minute,
    perHour: row.per_hour,
    revoked: row.revoked_at !== null,
    lastUsedAt: row.last_used_at,
    company: {
      id: row.companyId,
      name: row.companyName,
      timezone: row.timezone,
      active: Boolean(row.active),
    },
  };
}

export async function recordKeyUse(db: Db, keyId: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
}
