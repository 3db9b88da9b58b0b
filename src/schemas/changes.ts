import { type Static, Type } from 'typebox';
import { commaList, example, model, ref, says, Timestamp } from './common.ts';
import { EmployeeSchema } from './employees.ts';
import { ExpenseCategorySchema, ExpenseDetailSchema } from './expenses.ts';
import { LeaveDetailSchema, LeaveTypeSchema } from './leaves.ts';

export const FEED_RESOURCE_NAMES = [
  'employee',
  'leave_type',
  'leave',
  'expense_category',
  'expense',
] as const;

/** The longest cursor the service writes: five numbers of at most 16 digits, in base64url. */
export const CURSOR_MAX_LENGTH = 96;

export const MAX_CHANGES_LIMIT = 1000;
export const DEFAULT_CHANGES_LIMIT = 100;

const resource = `\\s*(${FEED_RESOURCE_NAMES.join('|')})\\s*`;

export const ChangesQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      pattern: `^[A-Za-z0-9_-]{1,${CURSOR_MAX_LENGTH}}$`,
      description: `A \`cursor\` (or \`next_cursor\`) from an earlier answer: only entries committed after it. Omitted: from the beginning.${example('NDIuMi4xMDE3')}`,
      ...says('must be a cursor from an earlier answer of this operation'),
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_CHANGES_LIMIT,
      default: DEFAULT_CHANGES_LIMIT,
      description: `Entries per answer, 1 to ${MAX_CHANGES_LIMIT}, in plain decimal digits.${example('500')}`,
      ...says(`must be an integer from 1 to ${MAX_CHANGES_LIMIT} in plain decimal digits`),
    }),
  ),
  resources: Type.Optional(
    Type.String({
      pattern: `^${resource}(,${resource})*$`,
      description: `Only these resources, a comma-separated list of: ${FEED_RESOURCE_NAMES.join(', ')}. Default: every resource the key may read; naming one it may not is a 403.${example('leave,expense')}`,
      ...commaList({ type: 'string', enum: [...FEED_RESOURCE_NAMES] }),
      ...says(`must be a comma-separated list of: ${FEED_RESOURCE_NAMES.join(', ')}`),
    }),
  ),
});
export type ChangesQuery = Static<typeof ChangesQuery>;

/** What an upsert of each resource carries as its `record`. */
export const FEED_RECORD_SCHEMAS = {
  employee: EmployeeSchema,
  leave_type: LeaveTypeSchema,
  leave: LeaveDetailSchema,
  expense_category: ExpenseCategorySchema,
  expense: ExpenseDetailSchema,
} as const satisfies Record<(typeof FEED_RESOURCE_NAMES)[number], unknown>;

export const ChangeSchema = model(
  'Change',
  Type.Object(
    {
      cursor: Type.String({ description: 'This entry’s position: pass it as `after`.' }),
      resource: Type.Enum([...FEED_RESOURCE_NAMES], { type: 'string' }),
      id: Type.Integer(),
      change: Type.Enum(['upsert', 'delete'], {
        type: 'string',
        description:
          '`delete`: the record is gone, or (leave types, categories) no longer active; `upsert`: `record` is what the API serves for it now.',
      }),
      changed_at: Type.String({
        ...Timestamp,
        description: 'Commit time of the import that made the change (UTC, to the second).',
      }),
      record: Type.Union(
        [
          ref(EmployeeSchema),
          ref(LeaveTypeSchema),
          ref(LeaveDetailSchema),
          ref(ExpenseCategorySchema),
          ref(ExpenseDetailSchema),
          Type.Null(),
        ],
        {
          description:
            'The single-record `data` for employees, leaves and expenses; the list item for leave types and categories; null for a delete.',
        },
      ),
    },
    { description: 'A record at its latest change.' },
  ),
);

export const ChangesPageSchema = Type.Object({
  data: Type.Array(ref(ChangeSchema)),
  meta: Type.Object({
    next_cursor: Type.String({
      description:
        'The last entry’s cursor, or `after` itself when nothing is new: store it and poll with it.',
    }),
    has_more: Type.Boolean({ description: 'More entries are available now.' }),
  }),
});
