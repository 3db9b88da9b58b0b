import { company } from './company.ts';
import { employee } from './employee.ts';
import { expense } from './expense.ts';
import { expenseCategory } from './expense-category.ts';
import { leave } from './leave.ts';
import { leaveType } from './leave-type.ts';

/**
 * Every record type, in the order people read them (import files, messages, the CLI's
 * summary). Everything that needs all of them takes them from here. A type's place after
 * `company` is its number in the change feed (`feedRank`), stored in `deleted_records`,
 * `changes_forgotten` and the cursors clients keep: a new type goes at the end.
 */
export const RECORD_TYPES = [
  company,
  employee,
  leaveType,
  leave,
  expenseCategory,
  expense,
] as const;

export type RecordTypeOf = (typeof RECORD_TYPES)[number];
export type RecordType = RecordTypeOf['type'];
/** A record type every other one belongs to: each has a company_id. */
export type TenantRecordType = Exclude<RecordTypeOf, typeof company>;

// A parent must be a record type: naming one that is not fails to compile here.
type NamedParents = RecordTypeOf['parents'][number]['type'];
const parentsAreRecordTypes: [NamedParents] extends [RecordType] ? true : never = true;
void parentsAreRecordTypes;

export { company as COMPANY };

/** Every record type but the company: each belongs to one, and the change feed follows it. */
export const TENANT_RECORD_TYPES = RECORD_TYPES.filter((d): d is TenantRecordType => d !== company);

const BY_TYPE = new Map<string, RecordTypeOf>(RECORD_TYPES.map((d) => [d.type, d]));

/** The descriptor of `type`, or undefined for a name that is no record type. */
export const recordTypeNamed = (type: string): RecordTypeOf | undefined => BY_TYPE.get(type);

/** How many parents deep a type is: the company 0, a record that names none 1, … */
function depth(descriptor: RecordTypeOf): number {
  if (descriptor === company) return 0;
  const parents = descriptor.parents.map((p) => depth(BY_TYPE.get(p.type) as RecordTypeOf));
  return 1 + Math.max(0, ...parents);
}

/**
 * The order an import writes records in: parents before children, level by level (in the order
 * above within a level), so every composite foreign key finds its parent.
 */
export const WRITE_ORDER: readonly RecordTypeOf[] = RECORD_TYPES.map((d) => d).sort(
  (a, b) => depth(a) - depth(b),
);

/** A field of a record type that names a record of another. */
export interface Dependent {
  descriptor: TenantRecordType;
  field: string;
}

/**
 * Per record type, the fields of other types that name one: a record that such rows still
 * name cannot be deleted, and a change to it changes what the API serves for them (a leave
 * embeds its employee and leave type).
 */
export const DEPENDENTS: ReadonlyMap<RecordType, readonly Dependent[]> = new Map(
  RECORD_TYPES.map((parent) => [
    parent.type,
    TENANT_RECORD_TYPES.flatMap((descriptor) =>
      descriptor.parents
        .filter((p) => p.type === parent.type)
        .map((p) => ({ descriptor, field: p.field })),
    ),
  ]),
);

/** The record types another one names: their owners are tracked for the whole import. */
export const PARENT_TYPES: ReadonlySet<RecordType> = new Set(
  RECORD_TYPES.flatMap((d) => d.parents.map((p) => p.type as RecordType)),
);

/** Every table an import writes: each type's own, then its children's and receipts. */
export const IMPORTED_TABLES = RECORD_TYPES.flatMap((d) => [
  d.table,
  ...d.children.map((c) => c.table),
  ...(d.receipt ? (['receipts'] as const) : []),
]);

/**
 * The tables with a paginated API list: their indexes serve only the API (filters, sorts,
 * search), so a first load builds them after the rows (import/deferred-indexes.ts).
 */
export const LISTED_TABLES = RECORD_TYPES.flatMap((d) => (d.list ? [d.table] : []));

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** A record type's name in camelCase (`leave_type` → `leaveType`), as code names its ids. */
export const camelCase = <S extends string>(name: S): CamelCase<S> =>
  name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()) as CamelCase<S>;

/** One number per record type, keyed by camelCase name (the demo's first ids). */
export type PerRecordType<T> = { [D in RecordTypeOf as CamelCase<D['type']>]: T };
