import { Type } from 'typebox';
import {
  DEFAULT_PER_HOUR,
  DEFAULT_PER_MINUTE,
  KEY_NAME_MAX_LENGTH,
  KEY_NAME_PATTERN,
  KEY_NAME_RULE,
  MAX_RATE,
  SCOPES,
} from '../keys/scopes.ts';
import { NullableTimestamp, PathIdParam, says, Timestamp } from './common.ts';
import { ERRORS, type ErrorCode } from './problems.ts';

/**
 * The admin API's contract (its own OpenAPI document, on the admin listener). Models carry
 * `$id`s of their own, apart from the public API's, since the two documents never meet.
 */

const Scope = Type.Enum([...SCOPES], { type: 'string' });

export const AdminCompanySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    timezone: Type.String({ examples: ['Europe/Istanbul'] }),
    active: Type.Boolean({ description: 'An inactive company’s keys get 403 company_inactive.' }),
  },
  { $id: 'AdminCompany' },
);

export const AdminKeySchema = Type.Object(
  {
    id: Type.Integer(),
    company_id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({
      description: 'The first 12 characters of the key, to recognise it; never the key.',
      examples: ['cdk_3fQ9xB2a'],
    }),
    scopes: Type.Array(Scope),
    per_minute: Type.Integer(),
    per_hour: Type.Integer(),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'AdminKey' },
);

export const CreatedKeySchema = Type.Object(
  {
    ...AdminKeySchema.properties,
    key: Type.String({
      description: 'The raw key: shown in this answer only, never again (only its digest is kept).',
      examples: ['cdk_3fQ9xB2a…'],
    }),
  },
  { $id: 'CreatedKey' },
);

export const NewKeySchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: KEY_NAME_MAX_LENGTH,
      pattern: KEY_NAME_PATTERN,
      ...says(KEY_NAME_RULE),
      description: 'Label shown in /me and in key lists: not blank, no control characters.',
      examples: ['payroll'],
    }),
    scopes: Type.Optional(
      Type.Array(Scope, { minItems: 1, uniqueItems: true, default: [...SCOPES] }),
    ),
    per_minute: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RATE, default: DEFAULT_PER_MINUTE }),
    ),
    per_hour: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RATE, default: DEFAULT_PER_HOUR }),
    ),
  },
  { additionalProperties: false },
);

const DeletedValuesInWal = Type.Boolean({
  description:
    "SQLite: records were deleted, but a read held the write-ahead log past the busy timeout, so their old values are still in the database's -wal file until the next import or purge that deletes records, or until the last connection to the database closes.",
});

export const ImportSummarySchema = Type.Object(
  {
    records: Type.Integer({ description: 'Lines imported (blank lines are not records).' }),
    counts: Type.Record(Type.String(), Type.Integer(), {
      description: 'Records of each type.',
      examples: [{ company: 0, employee: 2, leave: 1 }],
    }),
    deletes: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Delete lines of each type (an id the company did not have counts too: replays are no-ops).',
      examples: [{ employee: 1 }],
    }),
    absent_deletes: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Of the delete lines, those whose id the company did not have, by type: they changed nothing (a wrong id, or a replay).',
      examples: [{ employee: 0 }],
    }),
    company_ids: Type.Array(Type.Integer(), {
      description: 'The companies the lines name (a company line’s own id included), ascending.',
      examples: [[1]],
    }),
    receipts: Type.Integer({ description: 'Receipt images stored (none come by HTTP).' }),
    deleted_values_in_wal: DeletedValuesInWal,
    unfinished_steps: Type.Array(Type.String(), {
      description:
        'Steps after the commit that failed, each with what comes of it; the records are committed all the same. Empty unless another import held the write lock past the busy timeout, or the like.',
      examples: [
        ['making the list samples failed (database is locked); the next import does it again'],
      ],
    }),
  },
  { $id: 'ImportSummary' },
);

export const PurgeRequestSchema = Type.Object(
  {
    confirm: Type.Integer({
      description: 'The company id again: nothing can bring a purged company back.',
      examples: [1],
    }),
  },
  { additionalProperties: false },
);

const count = (description: string) => Type.Integer({ minimum: 0, description });

export const PurgeSummarySchema = Type.Object(
  {
    company: Type.Object({ id: Type.Integer(), name: Type.String() }),
    removed: Type.Object({
      employees: count('Employees deleted.'),
      leave_types: count('Leave types deleted.'),
      leaves: count('Leaves deleted, with their attachments.'),
      expense_categories: count('Expense categories deleted.'),
      expenses: count('Expenses deleted, with their items.'),
      receipt_files: count('Receipt files removed from the store (no other row used them).'),
      api_keys: count('API keys deleted: they answer 401 on every instance within 2 s.'),
    }),
    receipt_files_left: Type.Array(
      Type.Object({
        path: Type.String({
          description: 'The file, relative to `RECEIPTS_DIR`.',
          examples: ['ab/ab12….jpg'],
        }),
        reason: Type.String({
          description: 'Why it could not be removed: the system error code.',
          examples: ['EROFS'],
        }),
      }),
      {
        description:
          'Receipt files the store could not remove (a read-only folder, say): the rows are gone all the same, and nothing names these files any more; remove them by hand. Usually empty.',
      },
    ),
    deleted_values_in_wal: DeletedValuesInWal,
  },
  { $id: 'PurgeSummary' },
);

/** Path ids as the public API takes them: plain digits, anything else 404 (`01`, `0x1`, `1e0`). */
export const CompanyIdParams = Type.Object({ id: PathIdParam('The company id.') });
export const KeyIdParams = Type.Object({ keyId: PathIdParam('The key id.') });

export const AdminProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri-reference' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERRORS) }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          parameter: Type.Optional(Type.String({ description: 'validation_failed: the field.' })),
          line: Type.Optional(Type.Integer({ description: 'import_failed: the NDJSON line.' })),
          field: Type.Optional(Type.String({ description: 'import_failed: the field.' })),
          message: Type.String(),
        }),
      ),
    ),
  },
  { $id: 'AdminProblem', description: 'An RFC 9457 problem detail (`application/problem+json`).' },
);

export const ADMIN_MODELS = [
  AdminProblemSchema,
  AdminCompanySchema,
  AdminKeySchema,
  CreatedKeySchema,
  ImportSummarySchema,
  PurgeSummarySchema,
] as const;
