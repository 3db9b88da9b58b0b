import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { nextImportNumber } from '../db/companies.queries.ts';
import type { Db } from '../db/database.ts';
import { DEPENDENTS, type RecordType, TENANT_RECORD_TYPES } from '../resources/index.ts';
import { formatTimestamp } from '../time.ts';

/** A record type's number in the change feed's order (and in `deleted_records.resource`). */
export const feedRank = (type: RecordType): number =>
  TENANT_RECORD_TYPES.findIndex((d) => d.type === type);

/** One record of one company in the import's own maps. */
const recordKey = (companyId: number, resource: number, id: number) =>
  `${companyId}.${resource}.${id}`;

export interface ChangeLogOptions {
  /** How long the change feed remembers a deletion; older ones are forgotten at commit. */
  retentionDays: number;
}

/**
 * What one import changes, for the change feed (docs/api.md "Syncing your data"), kept where its
 * rows are written (the import's transaction).
 *
 * Every company the import writes to takes its next import number (`companies.change_seq`:
 * one more than the last, or the time in milliseconds where that is larger); the update takes
 * the company row's lock (PostgreSQL) or happens under SQLite's one writer, and the lock is
 * held until the commit. A second import of the same company waits for the first
 * to commit before it takes its number, so numbers follow commit order and a reader never sees
 * a number while a smaller one can still be written. Every row the import changes carries the
 * number; at the commit, the records that embed a changed one get it too, and the number's
 * commit time is stored — only when something changed.
 */
export class ChangeLog {
  /** The import's time: the commit time's stand-in where rows need one as they are written. */
  readonly importTime = formatTimestamp(new Date());
  private readonly seqs = new Map<number, number>();
  /** Each company's number before this import: given back when the import changed nothing. */
  private readonly previousSeqs = new Map<number, number>();
  /** Companies a batch may have changed (checked at the commit). */
  private readonly maybeChanged = new Set<number>();
  /** Companies whose own row (name, time zone, status) changed. */
  private readonly companyRowChanged = new Set<number>();
  /** Per company and parent type: stored records the import changed. */
  private readonly updatedParents = new Map<number, Map<RecordType, Set<number>>>();
  /** Per company: whether it may have remembered deletions (then an upsert forgets its own). */
  private readonly deletionsKept = new Map<number, boolean>();
  /** Records deleted before this import that it brought back: their deletions' numbers. */
  private readonly returned = new Map<string, number>();

  private readonly db: Db;
  private readonly options: ChangeLogOptions;

  constructor(db: Db, options: ChangeLogOptions) {
    this.db = db;
    this.options = options;
  }

  /** The import's number for each company, taken (and the company locked) at first use. */
  async seqsOf(companyIds: Iterable<number>): Promise<void> {
    for (const companyId of companyIds) {
      if (this.seqs.has(companyId)) continue;
      // Takes the company row's lock (PostgreSQL waits for an import of the company that holds
      // it to commit) and reads the number then, for an import that changes nothing to give back.
      const locked = await this.db
        .updateTable('companies')
        .set((eb) => ({ change_seq: eb.ref('change_seq') }))
        .where('id', '=', companyId)
        .returning('change_seq')
        .executeTakeFirstOrThrow();
      const row = await this.db
        .updateTable('companies')
        .set({ change_seq: nextImportNumber(Date.now()) })
        .where('id', '=', companyId)
        .returning('change_seq')
        .executeTakeFirstOrThrow();
      this.previousSeqs.set(companyId, Number(locked.change_seq));
      this.seqs.set(companyId, Number(row.change_seq));
    }
  }

  seqOf(companyId: number): number {
    const seq = this.seqs.get(companyId);
    if (seq === undefined) throw new Error(`company ${companyId} has no import number yet`);
    return seq;
  }

  mayHaveChanged(companyIds: Iterable<number>): void {
    for (const companyId of companyIds) this.maybeChanged.add(companyId);
  }

  companyRowsChanged(companyIds: Iterable<number>): void {
    for (const companyId of companyIds) this.companyRowChanged.add(companyId);
  }

  /** Stored parent records whose embedded columns the import changed: what embeds them changes too. */
  parentsUpdated(companyId: number, type: RecordType, ids: readonly number[]): void {
    if (ids.length === 0) return;
    let byType = this.updatedParents.get(companyId);
    if (!byType) {
      byType = new Map();
      this.updatedParents.set(companyId, byType);
    }
    let set = byType.get(type);
    if (!set) {
      set = new Set();
      byType.set(type, set);
    }
    for (const id of ids) set.add(id);
  }

  /** Whether the company may have remembered deletions, looked up once. */
  async keepsDeletions(companyId: number): Promise<boolean> {
    let kept = this.deletionsKept.get(companyId);
    if (kept === undefined) {
      const row = await this.db
        .selectFrom('deleted_records')
        .select('record_id')
        .where('company_id', '=', companyId)
        .limit(1)
        .executeTakeFirst();
      kept = row !== undefined;
      this.deletionsKept.set(companyId, kept);
    }
    return kept;
  }

  /** A record deleted at `seq` (before this import) that an upsert of this import brought back. */
  cameBack(companyId: number, resource: number, id: number, seq: number): void {
    if (seq < this.seqOf(companyId)) this.returned.set(recordKey(companyId, resource, id), seq);
  }

  /**
   * The number of a record's deletion from before this import when this import brought it back
   * and now deletes it again (the deletion stays as it was); undefined for any other record.
   */
  goneAgain(companyId: number, resource: number, id: number): number | undefined {
    const key = recordKey(companyId, resource, id);
    const seq = this.returned.get(key);
    this.returned.delete(key);
    return seq;
  }

  deletionsRemembered(companyId: number): void {
    this.deletionsKept.set(companyId, true);
    this.maybeChanged.add(companyId);
  }

  /**
   * Finishes the import's changes before its commit: marks what embeds a changed record,
   * stores each changing number's commit time, forgets old deletions. Returns the companies
   * whose data changed, and those whose cached answers must go (with the company's own row).
   */
  async finish(): Promise<{ changed: number[]; stale: number[] }> {
    const changed: number[] = [];
    for (const [companyId, seq] of [...this.seqs].sort(([a], [b]) => a - b)) {
      if (this.maybeChanged.has(companyId)) await this.markEmbedding(companyId, seq);
      if (!(this.maybeChanged.has(companyId) && (await this.changedAt(companyId, seq)))) {
        // Nothing changed: the number is given back (the company is still locked by this
        // import, so nobody took a later one), and the database is as it was.
        await this.db
          .updateTable('companies')
          .set({ change_seq: this.previousSeqs.get(companyId) as number })
          .where('id', '=', companyId)
          .execute();
        continue;
      }
      changed.push(companyId);
      await this.forgetOldDeletions(companyId);
      await this.db
        .insertInto('change_commits')
        .values({
          company_id: companyId,
          change_seq: seq,
          committed_at: formatTimestamp(new Date()),
        })
        .execute();
    }
    const stale = [...new Set([...changed, ...this.companyRowChanged])];
    return { changed, stale };
  }

  /** Leaves and expenses embed their employee, leave type and category: they change with them. */
  private async markEmbedding(companyId: number, seq: number): Promise<void> {
    const byType = this.updatedParents.get(companyId);
    if (!byType) return;
    for (const [type, ids] of byType) {
      for (const { descriptor, field } of DEPENDENTS.get(type) ?? []) {
        for (const chunk of chunks([...ids])) {
          await this.db
            .updateTable(descriptor.table)
            .set({ change_seq: seq })
            .where('company_id', '=', companyId)
            .where(sql.ref(field), 'in', chunk)
            .where('change_seq', '<', seq)
            .execute();
        }
      }
    }
  }

  /** Whether any row or remembered deletion carries the company's number. */
  private async changedAt(companyId: number, seq: number): Promise<boolean> {
    for (const { table } of TENANT_RECORD_TYPES) {
      const row = await this.db
        .selectFrom(table)
        .select('id')
        .where('company_id', '=', companyId)
        .where('change_seq', '=', seq)
        .limit(1)
        .executeTakeFirst();
      if (row) return true;
    }
    const deletion = await this.db
      .selectFrom('deleted_records')
      .select('record_id')
      .where('company_id', '=', companyId)
      .where('change_seq', '=', seq)
      .limit(1)
      .executeTakeFirst();
    return deletion !== undefined;
  }

  /**
   * Forgets the deletions of imports committed `retentionDays` ago or more: from now on a cursor
   * given before that, from before the newest forgotten deletion of a resource it reads, is
   * answered 410 (src/db/changes.queries.ts).
   */
  private async forgetOldDeletions(companyId: number): Promise<void> {
    const cutoff = formatTimestamp(new Date(Date.now() - this.options.retentionDays * 86_400_000));
    const oldest = await this.db
      .selectFrom('change_commits')
      .select((eb) => eb.fn.max('change_seq').as('seq'))
      .where('company_id', '=', companyId)
      .where('committed_at', '<=', cutoff)
      .executeTakeFirst();
    if (oldest?.seq == null) return;
    // The newest deletion forgotten of each resource, by its position in the feed.
    const newest = [];
    for (let resource = 0; resource < TENANT_RECORD_TYPES.length; resource++) {
      const row = await this.db
        .selectFrom('deleted_records')
        .select(['change_seq', 'resource', 'record_id'])
        .where('company_id', '=', companyId)
        .where('change_seq', '<=', Number(oldest.seq))
        .where('resource', '=', resource)
        .orderBy('change_seq', 'desc')
        .orderBy('record_id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (row) newest.push(row);
    }
    if (newest.length === 0) return;
    const last = newest.reduce((a, b) =>
      Number(b.change_seq) > Number(a.change_seq) ||
      (Number(b.change_seq) === Number(a.change_seq) && b.resource > a.resource)
        ? b
        : a,
    );
    const seq = Number(last.change_seq);
    await this.db
      .deleteFrom('deleted_records')
      .where('company_id', '=', companyId)
      .where('change_seq', '<=', seq)
      .execute();
    await this.db
      .insertInto('changes_forgotten')
      .values(
        newest.map((row) => ({
          company_id: companyId,
          resource: Number(row.resource),
          change_seq: Number(row.change_seq),
          record_id: Number(row.record_id),
        })),
      )
      .onConflict((oc) =>
        oc.columns(['company_id', 'resource']).doUpdateSet((eb) => ({
          change_seq: eb.ref('excluded.change_seq'),
          record_id: eb.ref('excluded.record_id'),
        })),
      )
      .execute();
    // The newest of all: its number is the point cursors carry from now on; instances of a
    // release before migration 0015 compare cursors with its whole position.
    await this.db
      .updateTable('companies')
      .set({
        changes_forgotten_seq: seq,
        changes_forgotten_resource: Number(last.resource),
        changes_forgotten_id: Number(last.record_id),
      })
      .where('id', '=', companyId)
      .where('changes_forgotten_seq', '<', seq)
      .execute();
  }
}
