import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { postgresPlan } from '../helpers/plans.ts';
import { company, employee, writeNdjson } from '../helpers/records.ts';

const STATUSES = ['active', 'inactive', 'terminated'] as const;
/** Each roster order and the index its walk reads (migration 0019). */
const ORDERS = [
  ['id', 'employees_id_list'],
  ['name_folded', 'employees_name_folded_list'],
  ['number_folded', 'employees_number_folded_list'],
  ['hire_date', 'employees_hire_date_list'],
  ['updated_at', 'employees_updated_at_list'],
] as const;

describeEachDialect('roster pages', (dialect) => {
  it('walk to a status-filtered page in any order through the index alone', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const records = [
      company(1),
      ...Array.from({ length: 300 }, (_, i) =>
        employee(1, i + 1, {
          status: STATUSES[i % 3],
          first_name: `Name${(i * 7919) % 300}`,
          hire_date: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
        }),
      ),
    ];
    await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));
    if (handle.dialect === 'postgres') await sql`vacuum analyze employees`.execute(handle.db);

    for (const [column, index] of ORDERS) {
      const query = handle.db
        .selectFrom('employees')
        .select('id')
        .where('company_id', '=', 1)
        .where('status', 'in', ['active', 'terminated'])
        .orderBy(column)
        .orderBy('id')
        .limit(25)
        .offset(100)
        .compile();
      if (handle.dialect === 'sqlite') {
        const plan = handle.sqlite
          .prepare(`explain query plan ${query.sql}`)
          .all(...query.parameters);
        const details = (plan as { detail: string }[]).map((row) => row.detail).join('\n');
        assert.match(details, new RegExp(`USING COVERING INDEX ${index}\\b`), details);
      } else {
        // What matters here is that the walk in the sort order, once it is chosen, reads no
        // row to test the status.
        const details = await postgresPlan(handle.db, query, [
          'enable_seqscan',
          'enable_bitmapscan',
          'enable_sort',
        ]);
        assert.match(details, new RegExp(`Index Only Scan using ${index}\\b`), details);
      }
    }
  });
});
