import type { Db } from '../db/database.ts';
import {
  COMPANY,
  PARENT_TYPES,
  type RecordType,
  recordTypeNamed,
  type TenantRecordType,
} from '../resources/index.ts';
import { ImportError } from './import-error.ts';
import type { ParsedDelete, ParsedRecord } from './records.ts';

/** A record another one names: its company, or a parent record. */
type Reference = { type: RecordType; id: number };

/**
 * What an import knows of the records its records name: the companies, and which company
 * owns each parent record (an employee, a leave type, …), from the file so far or from the
 * database. A record may only name records of its own company, that came before it.
 */
export class References {
  private readonly companies = new Set<number>();
  /** Per parent type: id → the owning company's id. */
  private readonly owners = new Map<RecordType, Map<number, number>>(
    [...PARENT_TYPES].map((type) => [type, new Map()]),
  );
  /** Per parent type: id → the line of the file that deleted it. */
  private readonly deleted = new Map<RecordType, Map<number, number>>(
    [...PARENT_TYPES].map((type) => [type, new Map()]),
  );

  /** The records `record` names that neither the file so far nor a look-up has shown yet. */
  unknown(record: ParsedRecord): Reference[] {
    if (record.descriptor === COMPANY) return [];
    const references: Reference[] = [];
    const companyId = record.row.company_id as number;
    if (!this.companies.has(companyId)) references.push({ type: COMPANY.type, id: companyId });
    for (const { field, type } of record.descriptor.parents) {
      const id = (record.row[field] ?? null) as number | null;
      if (id !== null && !this.known(type as RecordType, id)) {
        references.push({ type: type as RecordType, id });
      }
    }
    return references;
  }

  /** The company of a delete line, when neither the file so far nor a look-up has shown it. */
  unknownCompany(record: ParsedDelete): Reference[] {
    return this.companies.has(record.companyId)
      ? []
      : [{ type: COMPANY.type, id: record.companyId }];
  }

  /**
   * Checks a delete line's company, and forgets the record: later lines may not name it (the
   * importer refuses the deletion itself while stored records still do).
   */
  checkDelete(line: number, record: ParsedDelete): void {
    const { descriptor, companyId, id } = record;
    this.requireCompany(line, companyId);
    const type = descriptor.type as RecordType;
    if (!PARENT_TYPES.has(type)) return;
    const owner = this.ownersOf(type).get(id);
    if (owner !== undefined && owner !== companyId) {
      throw ownedByAnother(line, type, id, owner);
    }
    this.ownersOf(type).delete(id);
    this.deletedOf(type).set(id, line);
  }

  /** Learns from the database which company owns each stored record of `references`. */
  async lookUp(reader: Db, references: Reference[]): Promise<void> {
    for (const reference of references) {
      if (reference.type === COMPANY.type) {
        const found = await reader
          .selectFrom('companies')
          .select('id')
          .where('id', '=', reference.id)
          .executeTakeFirst();
        if (found) this.companies.add(reference.id);
        continue;
      }
      const { table } = recordTypeNamed(reference.type) as TenantRecordType;
      const stored = await reader
        .selectFrom(table)
        .select('company_id')
        .where('id', '=', reference.id)
        .executeTakeFirst();
      if (stored) this.ownersOf(reference.type).set(reference.id, stored.company_id);
    }
  }

  /**
   * Checks the references of a record (all known by now) and notes what it owns. `earlier`
   * is the company of a record with the same id earlier in the batch, if any.
   */
  check(line: number, record: ParsedRecord, earlier: number | undefined): void {
    const { descriptor, row } = record;
    if (descriptor === COMPANY) {
      this.companies.add(row.id);
      return;
    }
    const companyId = row.company_id as number;
    this.requireCompany(line, companyId);
    const type = descriptor.type as RecordType;
    if (PARENT_TYPES.has(type)) {
      // A parent record in the file: the same id may not be claimed by two companies.
      const owners = this.ownersOf(type);
      alreadyOwned(line, type, row.id, owners.get(row.id), companyId);
      owners.set(row.id, companyId);
      this.deletedOf(type).delete(row.id);
    }
    for (const { field, type: parentType } of descriptor.parents) {
      const id = (row[field] ?? null) as number | null;
      if (id !== null) this.requireParent(line, field, parentType as RecordType, id, companyId);
    }
    if (!PARENT_TYPES.has(type)) alreadyOwned(line, type, row.id, earlier, companyId);
  }

  private ownersOf(type: RecordType): Map<number, number> {
    return this.owners.get(type) as Map<number, number>;
  }

  private deletedOf(type: RecordType): Map<number, number> {
    return this.deleted.get(type) as Map<number, number>;
  }

  /** Whether the file so far or a look-up has shown the record, or the file deleted it. */
  private known(type: RecordType, id: number): boolean {
    return this.ownersOf(type).has(id) || this.deletedOf(type).has(id);
  }

  private requireCompany(line: number, companyId: number): void {
    if (!this.companies.has(companyId)) {
      throw new ImportError(
        line,
        'company_id',
        `company ${companyId} not found (companies must come first)`,
      );
    }
  }

  /** A child's reference must name a record of its own company, earlier in the file or stored. */
  private requireParent(
    line: number,
    field: string,
    type: RecordType,
    id: number,
    companyId: number,
  ): void {
    const owner = this.ownersOf(type).get(id);
    const deletedOn = this.deletedOf(type).get(id);
    if (deletedOn !== undefined) {
      throw new ImportError(line, field, `${type} ${id} was deleted on line ${deletedOn}`);
    }
    if (owner === undefined) {
      throw new ImportError(
        line,
        field,
        `${type} ${id} not found (parents must come before children)`,
      );
    }
    if (owner !== companyId) {
      throw new ImportError(line, field, `${type} ${id} belongs to another company`);
    }
  }
}

/** The one error for a record id that another company has. */
export const ownedByAnother = (line: number, type: string, id: number, owner: number) =>
  new ImportError(line, 'company_id', `${type} ${id} already belongs to company ${owner}`);

function alreadyOwned(
  line: number,
  type: string,
  id: number,
  owner: number | undefined,
  companyId: number,
): void {
  if (owner !== undefined && owner !== companyId) throw ownedByAnother(line, type, id, owner);
}
