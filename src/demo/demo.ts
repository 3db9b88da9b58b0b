import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { insertApiKey } from '../db/keys.queries.ts';
import { importRecords } from '../import/importer.ts';
import type { SourceRecord } from '../import/ndjson.ts';
import { deletedRecords, type ImportSummary } from '../import/session.ts';
import { generateApiKey } from '../keys/api-key.ts';
import { DEFAULT_PER_HOUR, DEFAULT_PER_MINUTE, SCOPES } from '../keys/scopes.ts';
import type { ReceiptStore } from '../receipts/store.ts';
import { ID_MAX } from '../resources/fields.ts';
import { camelCase, RECORD_TYPES, type RecordType } from '../resources/index.ts';
import { type DemoIds, demoRecords } from './generate.ts';
import { type ReceiptExpense, writeExpenseReceipt } from './receipt-images.ts';

const DEMO_RECEIPTS = 4;

export interface DemoCompany {
  companyId: number;
  keyId: number;
  key: string;
  /** The first import's summary, its counts less the records the second one deleted. */
  summary: ImportSummary;
}

/** The first unused id of every record type, so a demo company never replaces real data. */
async function nextIds(db: Db): Promise<DemoIds> {
  const ids: Record<string, number> = {};
  for (const { type, table } of RECORD_TYPES) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.max('id').as('max'))
      .executeTakeFirst();
    ids[camelCase(type)] = Number(row?.max ?? 0) + 1;
  }
  return ids as DemoIds;
}

/**
 * The generated records, numbered like lines of a file, a thousand at a time; each receipt an
 * expense names is drawn from that expense into `receiptDir` before the importer reads it.
 */
async function* numbered(
  records: Iterable<Record<string, unknown>>,
  receiptDir: string,
): AsyncGenerator<SourceRecord[]> {
  let batch: SourceRecord[] = [];
  let line = 0;
  let receipts = 0;
  for (const value of records) {
    line += 1;
    // The demo's ids follow the highest stored: past 2^53 − 1 there are none left to take.
    if (typeof value.id === 'number' && value.id > ID_MAX) {
      throw new Error(
        `no ${value.type} id is left for a demo company: they follow the highest one stored, which is at or near ${ID_MAX} (2^53 − 1), the largest an id can be; make the demo in another database`,
      );
    }
    if (value.type === 'expense' && value.receipt !== null) {
      // Every other one a phone photo, so the importer has orientation and metadata to handle.
      await writeExpenseReceipt(
        receiptDir,
        value as unknown as ReceiptExpense,
        receipts++ % 2 === 0,
      );
    }
    batch.push({ line, value });
    if (batch.length === 1000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * A second import with a few deletions (two leave requests, an expense), as a source system
 * sends them: the change feed of a demo company shows deletions from the start. Not the first
 * records: the README's examples read `/leaves/1` and `/expenses/1` of the company `npm start`
 * makes.
 */
async function* history(ids: DemoIds): AsyncGenerator<SourceRecord[]> {
  const deleted = [
    { resource: 'leave', id: ids.leave + 2 },
    { resource: 'leave', id: ids.leave + 3 },
    { resource: 'expense', id: ids.expense + DEMO_RECEIPTS + 2 },
  ];
  yield deleted.map(({ resource, id }, i) => ({
    line: i + 1,
    value: { type: 'delete', resource, company_id: ids.company, id },
  }));
}

/**
 * Generates a demo company through the same importer as `cdapi import` (so it passes the
 * same validation), with a few real JPEG receipts drawn from their expenses, and creates one
 * key with every scope.
 */
export async function createDemoCompany(
  handle: DatabaseHandle,
  store: ReceiptStore,
  options: { employees: number; today?: Date },
): Promise<DemoCompany> {
  const receiptDir = await mkdtemp(join(tmpdir(), 'cdapi-demo-'));
  try {
    const ids = await nextIds(handle.db);
    const records = demoRecords({
      ids,
      employees: options.employees,
      today: options.today ?? new Date(),
      receipts: DEMO_RECEIPTS,
    });
    const loaded = await importRecords(handle, store, numbered(records, receiptDir), receiptDir);
    const later = await importRecords(handle, store, history(ids), receiptDir);
    // What the company holds: the records loaded, less those the history deleted.
    const counts = { ...loaded.counts };
    for (const type of Object.keys(counts) as RecordType[]) {
      counts[type] -= deletedRecords(later, type);
    }
    const summary = { ...loaded, counts };
    const generated = generateApiKey();
    const key = await insertApiKey(handle.db, {
      companyId: ids.company,
      name: 'demo',
      prefix: generated.prefix,
      hash: generated.hash,
      scopes: [...SCOPES],
      perMinute: DEFAULT_PER_MINUTE,
      perHour: DEFAULT_PER_HOUR,
    });
    return { companyId: ids.company, keyId: key.id, key: generated.key, summary };
  } finally {
    await rm(receiptDir, { recursive: true, force: true });
  }
}
