import { type RawBuilder, sql } from 'kysely';
import { CURSOR_MAX_LENGTH } from '../schemas/changes.ts';
import type { Employee } from '../schemas/employees.ts';
import type { ExpenseCategory, ExpenseDetail } from '../schemas/expenses.ts';
import type { LeaveDetail, LeaveType } from '../schemas/leaves.ts';
import type { Db } from './database.ts';
import { findEmployees } from './employees.queries.ts';
import type { ReceiptUrls } from './expenses.queries.ts';
import { findExpenses, listActiveCategories } from './expenses.queries.ts';
import { findLeaves, listActiveLeaveTypes } from './leaves.queries.ts';

/**
 * The resources of the change feed, in its order (an entry's rank is its index here, and
 * `deleted_records.resource`): the record types that belong to a company, in the order of
 * src/resources/index.ts (a test holds them equal). `listed`: the record leaves its list when
 * inactive, and the feed shows it as deleted then.
 */
export const FEED_RESOURCES = [
  { name: 'employee', table: 'employees', listed: false },
  { name: 'leave_type', table: 'leave_types', listed: true },
  { name: 'leave', table: 'leaves', listed: false },
  { name: 'expense_category', table: 'expense_categories', listed: true },
  { name: 'expense', table: 'expenses', listed: false },
] as const;

export type FeedResource = (typeof FEED_RESOURCES)[number]['name'];

/** A position in a company's feed: the import number, then the resource's rank, then the id. */
export interface FeedPosition {
  seq: number;
  rank: number;
  id: number;
}

/** Before every entry: ids are positive, numbers start at 0. */
export const FEED_START: FeedPosition = { seq: 0, rank: 0, id: 0 };

/** What the API serves for a record of the feed. */
export type FeedRecord = Employee | LeaveType | LeaveDetail | ExpenseCategory | ExpenseDetail;

export interface FeedEntry {
  cursor: string;
  resource: FeedResource;
  id: number;
  change: 'upsert' | 'delete';
  changed_at: string;
  record: FeedRecord | null;
}

export interface FeedPage {
  data: FeedEntry[];
  meta: { next_cursor: string; has_more: boolean };
}

/** A cursor as the service reads it: a position, the company whose feed it is in, and when. */
export interface FeedCursor extends FeedPosition {
  /** Absent from the cursors written before it was added, which are read as this company's. */
  companyId: number | undefined;
  /**
   * How far the company's feed had forgotten deletions when the cursor was given (every
   * deletion of an import up to this number): the read it continues never needed those.
   * Absent from the cursors written before it was added, which are read as from before any.
   */
  forgotten: number | undefined;
}

/**
 * An opaque cursor: the position, the company and how far the feed had forgotten, base64url.
 * While the feed has forgotten nothing, the last part is left out: read as before any forgotten
 * deletion, such a cursor means the same, and the releases before it read it too (a rolling
 * restart sends clients to both).
 */
export const encodeCursor = (
  { seq, rank, id }: FeedPosition,
  companyId: number,
  forgotten: number,
): string =>
  Buffer.from(`${seq}.${rank}.${id}.${companyId}${forgotten > 0 ? `.${forgotten}` : ''}`).toString(
    'base64url',
  );

const DIGITS = '(0|[1-9]\\d{0,15})';
const CURSOR = new RegExp(`^${DIGITS}\\.([0-4])\\.${DIGITS}(?:\\.${DIGITS}(?:\\.${DIGITS})?)?$`);

/** The position and company a cursor names, or null when it is not one this service wrote. */
export function decodeCursor(cursor: string): FeedCursor | null {
  if (!new RegExp(`^[A-Za-z0-9_-]{1,${CURSOR_MAX_LENGTH}}$`).test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  const match = CURSOR.exec(text);
  if (!match) return null;
  const [seq, rank, id] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  const [companyId, forgotten] = [match[4], match[5]].map((part) =>
    part === undefined ? undefined : Number(part),
  );
  if (![seq, id, companyId ?? 0, forgotten ?? 0].every(Number.isSafeInteger)) return null;
  // One spelling a cursor: the text it stands for, written back, is the cursor given.
  if (Buffer.from(text, 'latin1').toString('base64url') !== cursor) return null;
  return { seq, rank, id, companyId, forgotten };
}

interface Candidate {
  rank: number;
  id: number;
  seq: number;
  /** 1 for a stored record that its list shows, 0 for an inactive one, -1 for a deletion. */
  state: number;
}

/**
 * One statement for every source, so that all of them are read in one snapshot: an import
 * that commits meanwhile is either wholly in the page or wholly after it. Each source gives
 * its next `take` entries after the position, in the feed's order, through its
 * (company_id, change_seq, id) index.
 */
async function candidates(
  db: Db,
  companyId: number,
  after: FeedPosition,
  ranks: readonly number[],
  take: number,
): Promise<Candidate[]> {
  const { seq, rank, id } = after;
  const branches = ranks.flatMap((r) => {
    const { table, listed } = FEED_RESOURCES[r] as (typeof FEED_RESOURCES)[number];
    const state = listed ? sql`case when active then 1 else 0 end` : sql`1`;
    const branch = (beyond: RawBuilder<unknown>, order: RawBuilder<unknown>, name: string) =>
      sql`select * from (select ${sql.lit(r)} as rank, id, change_seq as seq, ${state} as state
      from ${sql.table(table)} where company_id = ${companyId} and ${beyond}
      order by ${order} limit ${take}) as ${sql.ref(name)}`;
    const later = (from: RawBuilder<unknown>) => branch(from, sql`change_seq, id`, `r${r}`);
    if (r < rank) return [later(sql`change_seq > ${seq}`)];
    if (r > rank) return [later(sql`change_seq >= ${seq}`)];
    // The rest of the position's own number, then the numbers after it: SQLite reads
    // `(change_seq, id) > (?, ?)` as `change_seq >= ?` and skips the ids one by one (20 ms
    // half-way through a million leaves of one import), but seeks each of these two ranges.
    return [
      branch(sql`change_seq = ${seq} and id > ${id}`, sql`id`, `r${r}_same`),
      later(sql`change_seq > ${seq}`),
    ];
  });
  const deletions = sql`select * from (select resource as rank, record_id as id, change_seq as seq, -1 as state
    from deleted_records where company_id = ${companyId}
      and resource in (${sql.join(ranks.map((r) => sql.lit(r)))})
      and (change_seq, resource, record_id) > (${seq}, ${rank}, ${id})
    order by change_seq, resource, record_id limit ${take}) as deletions`;
  const { rows } =
    await sql<Candidate>`${sql.join([...branches, deletions], sql` union all `)}`.execute(db);
  return rows
    .map((row) => ({
      rank: Number(row.rank),
      id: Number(row.id),
      seq: Number(row.seq),
      state: Number(row.state),
    }))
    .sort((a, b) => a.seq - b.seq || a.rank - b.rank || a.id - b.id);
}

/** The records a page upserts, each as the API serves it now, by rank and id. */
async function recordsOf(
  db: Db,
  companyId: number,
  entries: Candidate[],
  urls: ReceiptUrls,
): Promise<Map<string, FeedRecord>> {
  const ids = FEED_RESOURCES.map(() => [] as number[]);
  for (const { rank, id, state } of entries) if (state === 1) ids[rank]?.push(id);
  const [employees, leaveTypes, leaves, categories, expenses] = await Promise.all([
    findEmployees(db, companyId, ids[0] as number[]),
    listActiveLeaveTypes(db, companyId, ids[1]),
    findLeaves(db, companyId, ids[2] as number[]),
    listActiveCategories(db, companyId, ids[3]),
    findExpenses(db, companyId, ids[4] as number[], urls),
  ]);
  const records = new Map<string, FeedRecord>();
  [employees, leaveTypes, leaves, categories, expenses].forEach((found, rank) => {
    for (const record of found) records.set(`${rank}.${record.id}`, record);
  });
  return records;
}

/** The commit time of each import number on the page. */
async function commitTimes(
  db: Db,
  companyId: number,
  seqs: number[],
): Promise<Map<number, string>> {
  if (seqs.length === 0) return new Map();
  const rows = await db
    .selectFrom('change_commits')
    .select(['change_seq', 'committed_at'])
    .where('company_id', '=', companyId)
    .where('change_seq', 'in', [...new Set(seqs)])
    .execute();
  return new Map(rows.map((row) => [Number(row.change_seq), row.committed_at]));
}

export interface FeedRequest {
  /** The cursor the client sent (none: from the start). */
  cursor: FeedCursor | undefined;
  /** That cursor as it was sent. */
  sent: string | undefined;
  limit: number;
  /** The ranks of the resources to read. */
  ranks: readonly number[];
}

/** Why a cursor cannot be read on from (a 410). */
export type LostCursor =
  /** The feed has forgotten a deletion after it, of a resource it reads. */
  | 'forgotten'
  /** It is past the company's latest import: the database is older than the cursor. */
  | 'ahead';

const before = (a: FeedPosition, b: FeedPosition) =>
  a.seq - b.seq || a.rank - b.rank || a.id - b.id;

/** How far the company's feed has forgotten deletions: every one of an import up to this number. */
async function forgottenUpTo(db: Db, companyId: number): Promise<number> {
  const company = await db
    .selectFrom('companies')
    .select('changes_forgotten_seq')
    .where('id', '=', companyId)
    .executeTakeFirst();
  return Number(company?.changes_forgotten_seq ?? 0);
}

/**
 * Why the read that `cursor` continues cannot go on, if it cannot. Checked after the page was
 * read: deletions are forgotten and imports numbered only ever later, so what was read holds
 * every deletion after the cursor when none after it is forgotten now. A deletion forgotten
 * before the cursor was given is one the read never needed (it began after it was forgotten, or
 * was past it, as the answer that gave the cursor checked); nor is one of a resource it does not
 * read.
 */
async function lostCursor(
  db: Db,
  companyId: number,
  cursor: FeedCursor,
  ranks: readonly number[],
): Promise<LostCursor | null> {
  const [company, forgotten, committed] = await Promise.all([
    db
      .selectFrom('companies')
      .select('changes_forgotten_seq')
      .where('id', '=', companyId)
      .executeTakeFirst(),
    // Every resource's (five rows at most): the newest of all tells whether they are up to date.
    db
      .selectFrom('changes_forgotten')
      .select(['resource', 'change_seq', 'record_id'])
      .where('company_id', '=', companyId)
      .execute(),
    // Number 0 is the data from before the feed (migration 0008), and the beginning.
    cursor.seq === 0
      ? true
      : db
          .selectFrom('change_commits')
          .select('change_seq')
          .where('company_id', '=', companyId)
          .where('change_seq', '=', cursor.seq)
          .executeTakeFirst()
          .then((row) => row !== undefined),
  ]);
  if (company === undefined) return null;
  const positions = forgotten
    .filter((row) => ranks.includes(Number(row.resource)))
    .map((row) => ({
      seq: Number(row.change_seq),
      rank: Number(row.resource),
      id: Number(row.record_id),
    }));
  // An import by a release before migration 0015 (during a roll-out) forgets deletions into
  // the company's row alone, which is then newer than every row of changes_forgotten: its
  // number bounds every resource, at the end of its import (as 0015 filled the table), or a
  // cursor from before it would read on past deletions it never saw. So does a purged company
  // imported again, whose cursors from before the purge are lost.
  const newestOfAll = Number(company.changes_forgotten_seq);
  if (newestOfAll > 0 && forgotten.every((row) => Number(row.change_seq) < newestOfAll)) {
    positions.push({ seq: newestOfAll, rank: FEED_RESOURCES.length, id: 0 });
  }
  for (const position of positions) {
    const since = cursor.forgotten === undefined || position.seq > cursor.forgotten;
    if (since && before(cursor, position) < 0) return 'forgotten';
  }
  // From an import the feed does not hold (past its latest one, or lost), or given when the
  // feed had forgotten more than it has now: a database older than the cursor (or a cursor this
  // service never wrote). Import numbers are never taken twice (`nextImportNumber`), so a lost
  // import's cursor stays refused after the imports that follow a restore.
  if (!committed || (cursor.forgotten ?? 0) > Number(company.changes_forgotten_seq)) {
    return 'ahead';
  }
  return null;
}

/**
 * A page of a company's change feed (docs/api.md "Syncing your data"): every record at its latest
 * change after the cursor, in commit order. A record whose row is gone or has left its list by
 * the time it is read is a `delete` here (its own deletion or change comes later in the feed).
 * When the feed cannot go on from the cursor, the reason (a 410).
 */
export async function readChanges(
  db: Db,
  companyId: number,
  request: FeedRequest,
  urls: ReceiptUrls,
): Promise<FeedPage | { lost: LostCursor }> {
  const { cursor, sent, limit, ranks } = request;
  // Read before the page: every deletion forgotten by then is one this read does not need.
  const forgotten = await forgottenUpTo(db, companyId);
  const found = await candidates(db, companyId, cursor ?? FEED_START, ranks, limit + 1);
  if (cursor !== undefined) {
    const lost = await lostCursor(db, companyId, cursor, ranks);
    if (lost) return { lost };
  }
  const entries = found.slice(0, limit);
  const [records, times] = await Promise.all([
    recordsOf(db, companyId, entries, urls),
    commitTimes(
      db,
      companyId,
      entries.map((entry) => entry.seq),
    ),
  ]);
  const data = entries.map((entry): FeedEntry => {
    const record = records.get(`${entry.rank}.${entry.id}`) ?? null;
    return {
      cursor: encodeCursor(entry, companyId, forgotten),
      resource: (FEED_RESOURCES[entry.rank] as (typeof FEED_RESOURCES)[number]).name,
      id: entry.id,
      change: record ? 'upsert' : 'delete',
      changed_at: times.get(entry.seq) ?? '',
      record,
    };
  });
  const last = entries.at(-1);
  return {
    data,
    meta: {
      // Nothing new: the cursor sent, as it was sent (one written before cursors named their
      // company stays as it is).
      next_cursor: last
        ? encodeCursor(last, companyId, forgotten)
        : (sent ?? encodeCursor(FEED_START, companyId, forgotten)),
      has_more: found.length > limit,
    },
  };
}
