import { FieldError, FieldReader } from '../resources/fields.ts';
import type { RecordTypeOf, TenantRecordType } from '../resources/index.ts';
import { RECORD_TYPES, recordTypeNamed, TENANT_RECORD_TYPES } from '../resources/index.ts';
import type { ParsedRow } from '../resources/record-type.ts';

/**
 * One NDJSON object read as the record it stands for (docs/import-format.md), by its type's parser,
 * or a FieldError naming the first bad field. Pure: references to other records are checked by the
 * import session, which knows what the file and the database hold.
 */
export interface ParsedRecord {
  descriptor: RecordTypeOf;
  row: ParsedRow['row'];
  children: NonNullable<ParsedRow['children']>;
  receiptPath: string | null;
}

/**
 * A delete line: `{"type":"delete","resource":R,"company_id":C,"id":N}` (docs/import-format.md).
 */
export interface ParsedDelete {
  descriptor: TenantRecordType;
  companyId: number;
  id: number;
}

const TYPES = [...RECORD_TYPES.map((d) => d.type), 'delete'];

export function parseRecord(value: unknown): ParsedRecord | ParsedDelete {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FieldError('(record)', 'must be a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (type === 'delete') return parseDelete(new FieldReader(value as Record<string, unknown>));
  const descriptor = typeof type === 'string' ? recordTypeNamed(type) : undefined;
  if (!descriptor) throw new FieldError('type', `must be one of ${TYPES.join(', ')}`);
  const parsed: ParsedRow = descriptor.parse(new FieldReader(value as Record<string, unknown>));
  return {
    descriptor,
    row: parsed.row,
    children: parsed.children ?? {},
    receiptPath: parsed.receiptPath ?? null,
  };
}

function parseDelete(r: FieldReader): ParsedDelete {
  const resource = r.oneOf(
    'resource',
    TENANT_RECORD_TYPES.map((d) => d.type),
  );
  return {
    descriptor: recordTypeNamed(resource) as TenantRecordType,
    companyId: r.id('company_id'),
    id: r.id('id'),
  };
}

export const isDelete = (record: ParsedRecord | ParsedDelete): record is ParsedDelete =>
  !('row' in record);
