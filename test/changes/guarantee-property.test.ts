import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { openDatabase } from '../../src/db/connect.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { type TestApi, useApi } from '../helpers/api.ts';
import { describeEachDialect } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeNdjson,
} from '../helpers/records.ts';

/**
 * The change feed's guarantee (docs/api.md "Syncing your data") as a property: random sequences of
 * imports of one company (upserts, files that change nothing, deletions, deactivations of leave
 * types and categories) while a client bootstraps and follows the feed with random page sizes,
 * reading while each import runs, on a connection of its own as `cdapi import` would. After every
 * step the client's copy equals what the list and single-record operations return.
 *
 * Seeded: FC_SEED=… reproduces a run; FEED_RUNS sets how many.
 */

const SEED = Number(process.env.FC_SEED ?? 20261124);
const RUNS = Number(process.env.FEED_RUNS ?? 12);
/** Each run's company and records live in their own id range of one shared database. */
const IDS_PER_RUN = 100;
const SLOTS = 4;

type Step =
  | {
      kind: 'upsert';
      employees: { slot: number; name: string }[];
      leaveTypes: { slot: number; active: boolean }[];
      categories: { slot: number; active: boolean }[];
      leaves: { slot: number; employee: number; type: number; days: number }[];
      expenses: { slot: number; employee: number; category: number; title: string }[];
    }
  | { kind: 'again' }
  | { kind: 'delete'; resource: string; slots: number[] };

const slot = fc.integer({ min: 1, max: SLOTS });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('upsert' as const),
    employees: fc.array(fc.record({ slot, name: fc.constantFrom('Yılmaz', 'Müller', 'García') }), {
      minLength: 1,
      maxLength: 3,
    }),
    leaveTypes: fc.array(fc.record({ slot, active: fc.boolean() }), { minLength: 1, maxLength: 2 }),
    categories: fc.array(fc.record({ slot, active: fc.boolean() }), { minLength: 1, maxLength: 2 }),
    leaves: fc.array(
      fc.record({ slot, employee: fc.nat(), type: fc.nat(), days: fc.integer({ min: 1, max: 9 }) }),
      { maxLength: 3 },
    ),
    expenses: fc.array(
      fc.record({
        slot,
        employee: fc.nat(),
        category: fc.nat(),
        title: fc.constantFrom('Taxi', 'Hotel'),
      }),
      { maxLength: 3 },
    ),
  }),
  fc.constant({ kind: 'again' as const }),
  fc.record({
    kind: fc.constant('delete' as const),
    resource: fc.constantFrom('employee', 'leave_type', 'leave', 'expense_category', 'expense'),
    slots: fc.array(slot, { minLength: 1, maxLength: 3 }),
  }),
);

/** The records of an upsert step: what leaves and expenses name is in the same file. */
function fileOf(s: Step, companyId: number, base: number): unknown[] {
  const id = (n: number) => base + n;
  if (s.kind === 'delete') {
    return [
      company(companyId),
      ...s.slots.map((n) => ({
        type: 'delete',
        resource: s.resource,
        company_id: companyId,
        id: id(n),
      })),
    ];
  }
  if (s.kind !== 'upsert') return [];
  const pick = <T>(list: T[], n: number) => list[n % list.length] as T;
  return [
    company(companyId),
    ...s.employees.map((e) => employee(companyId, id(e.slot), { last_name: e.name })),
    ...s.leaveTypes.map((t) => leaveType(companyId, id(t.slot), { active: t.active })),
    ...s.categories.map((c) => category(companyId, id(c.slot), { active: c.active })),
    ...s.leaves.map((l) =>
      leave(
        companyId,
        id(l.slot),
        id(pick(s.employees, l.employee).slot),
        id(pick(s.leaveTypes, l.type).slot),
        {
          days: l.days,
          document: { deadline: null, obligation_status: null, attachments: [] },
        },
      ),
    ),
    ...s.expenses.map((x) =>
      expense(
        companyId,
        id(x.slot),
        id(pick(s.employees, x.employee).slot),
        id(pick(s.categories, x.category).slot),
        {
          title: x.title,
        },
      ),
    ),
  ];
}

const PATHS: Record<string, string> = {
  employee: '/employees',
  leave_type: '/leave-types',
  leave: '/leaves',
  expense_category: '/expense-categories',
  expense: '/expenses',
};

/** What the list operations return now, each record as the feed must hold it. */
async function truth(api: TestApi, key: string): Promise<Map<string, unknown>> {
  const held = new Map<string, unknown>();
  for (const [resource, path] of Object.entries(PATHS)) {
    const list = await api.get(`${path}?per_page=100`, key);
    assert.equal(list.status, 200, list.body);
    for (const item of list.json.data as { id: number }[]) {
      const single =
        resource === 'employee' || resource.endsWith('_type') || resource.endsWith('category');
      const record = single ? item : (await api.get(`${path}/${item.id}`, key)).json.data;
      held.set(`${resource} ${item.id}`, record);
    }
  }
  return held;
}

/** A client of the feed: its copy, and its cursor. */
class Follower {
  readonly copy = new Map<string, unknown>();
  cursor: string | undefined;
  private readonly api: TestApi;
  private readonly key: string;

  constructor(api: TestApi, key: string) {
    this.api = api;
    this.key = key;
  }

  /** Reads pages until the feed has nothing more now. */
  async catchUp(limit: number): Promise<void> {
    for (;;) {
      const query = new URLSearchParams({
        limit: String(limit),
        ...(this.cursor ? { after: this.cursor } : {}),
      });
      const page = await this.api.get(`/changes?${query}`, this.key);
      assert.equal(page.status, 200, page.body);
      for (const entry of page.json.data) {
        const name = `${entry.resource} ${entry.id}`;
        if (entry.change === 'delete') this.copy.delete(name);
        else this.copy.set(name, entry.record);
      }
      this.cursor = page.json.meta.next_cursor;
      if (!page.json.meta.has_more) return;
    }
  }
}

describeEachDialect('the change feed’s guarantee (property)', (dialect) => {
  it('a following client’s copy equals the lists after every import, also while imports run', async (t) => {
    const api = await useApi(t, dialect, { records: [] });
    // Imports run on a connection of their own, as `cdapi import` in another process would.
    const importer = openDatabase(api.target);
    t.after(() => importer.close());
    const store = new FileReceiptStore(api.config.receiptsDir);
    let run = 0;
    let files = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(step, fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 7 }),
        async (steps) => {
          run += 1;
          const companyId = run;
          const base = run * IDS_PER_RUN;
          await api.load([company(companyId)]);
          const key = await api.createKey(companyId);
          const client = new Follower(api, key);
          let last: unknown[] = [company(companyId)];
          for (const [s, limit] of steps) {
            const records = s.kind === 'again' ? last : fileOf(s, companyId, base);
            files += 1;
            const file = writeNdjson(api.dir, records, `feed-${files}.ndjson`);
            const importing = importFile(importer, store, file).then(
              () => true,
              () => false,
            );
            // The client reads while the import runs, and once more after it.
            let done = false;
            void importing.then(() => {
              done = true;
            });
            do await client.catchUp(limit);
            while (!done);
            if (await importing) last = records;
            await client.catchUp(limit);
            assert.deepEqual(client.copy, await truth(api, key));
          }
          // Two imports of the company at once, the client reading all along.
          const both = Promise.all(
            [
              last,
              fileOf({ kind: 'delete', resource: 'expense', slots: [1, 2] }, companyId, base),
            ].map((records) => {
              files += 1;
              return importFile(
                importer,
                store,
                writeNdjson(api.dir, records, `feed-${files}.ndjson`),
              ).catch(() => null);
            }),
          );
          let settled = false;
          void both.then(() => {
            settled = true;
          });
          do await client.catchUp(2);
          while (!settled);
          await client.catchUp(3);
          assert.deepEqual(client.copy, await truth(api, key));
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
