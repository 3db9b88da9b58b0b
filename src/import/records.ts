import { FieldError, FieldReader } from '../resources/fields.ts';
import type { RecordTypeOf } from '../resources/index.ts';
import { RECORD_TYPES, recordTypeNamed } from '../resources/index.ts';
import type { ParsedRow } from '../resources/record-type.ts';

/**
 * One NDJSON object read as the record it stands for (PRODUCT.md §5), by its type's parser, or
 * a FieldError naming the first bad field. Pure: references to other records are checked by
 * the import session, which knows what the file and the database hold.
 */
export interface ParsedRecord {
  descriptor: RecordTypeOf;
  row: ParsedRow['row'];
  children: NonNullable<ParsedRow['children']>;
  receiptPath: string | null;
}

export function parseRecord(value: unknown): ParsedRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FieldError('(record)', 'must be a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  const descriptor = typeof type === 'string' ? recordTypeNamed(type) : undefined;
  if (!descriptor) {
    throw new FieldError('type', `must be one of ${RECORD_TYPES.map((d) => d.type).join(', ')}`);
  }
  const parsed: ParsedRow = descriptor.parse(new FieldReader(value as Record<string, unknown>));
  return {
    descriptor,
    row: parsed.row,
    children: parsed.children ?? {},
    receiptPath: parsed.receiptPath ?? null,
  };
}
