import assert from 'node:assert/strict';
import { it } from 'node:test';
import { receiptFilesInUse } from '../../src/db/receipts.queries.ts';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { category, company, employee, expense, writeNdjson } from '../helpers/records.ts';

/** More receipts than one statement's chunk of keys (500), so the keys take several. */
const RECEIPTS = 700;

const originalKey = (companyId: number, n: number) => `${companyId}/originals/${n}.jpg`;
const processedKey = (companyId: number, n: number) => `${companyId}/processed/${n}.jpg`;

describeEachDialect('receipt files still in use', (dialect) => {
  it('are the keys a receipt row names, as its original or processed file, of any company', async (t) => {
    const { handle } = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    const records = [1, 2].flatMap((companyId) => [
      company(companyId),
      employee(companyId, companyId * 10),
      category(companyId, companyId * 10),
      ...Array.from({ length: RECEIPTS }, (_, i) =>
        expense(companyId, companyId * 1000 + i, companyId * 10, companyId * 10),
      ),
    ]);
    await importFile(handle, new FileReceiptStore(dir), writeNdjson(dir, records));
    // Receipt rows written directly: these keys name no files, and the question is the rows'.
    for (const companyId of [1, 2]) {
      await handle.db
        .insertInto('receipts')
        .values(
          Array.from({ length: RECEIPTS }, (_, i) => ({
            expense_id: companyId * 1000 + i,
            company_id: companyId,
            original_key: originalKey(companyId, i),
            original_content_type: 'image/jpeg',
            original_size: 1,
            original_sha256: String(i),
            processed_key: processedKey(companyId, i),
            processed_size: 1,
          })),
        )
        .execute();
    }

    const asked = [
      ...Array.from({ length: RECEIPTS }, (_, i) => originalKey(1, i)),
      ...Array.from({ length: RECEIPTS }, (_, i) => processedKey(2, i)),
      originalKey(1, RECEIPTS),
      processedKey(2, RECEIPTS + 1),
      `3/originals/0.jpg`,
    ];
    const used = await receiptFilesInUse(handle.db, asked);
    const unused = asked.filter((key) => !used.has(key));
    assert.deepEqual(unused, [
      originalKey(1, RECEIPTS),
      processedKey(2, RECEIPTS + 1),
      '3/originals/0.jpg',
    ]);
    assert.equal((await receiptFilesInUse(handle.db, [])).size, 0);

    if (handle.dialect === 'sqlite') {
      // Each key column read through its own index, not a scan of every receipt per chunk.
      const { sql: text, parameters } = handle.db
        .selectFrom('receipts')
        .select(['original_key', 'processed_key'])
        .where((eb) =>
          eb.or([eb('original_key', 'in', ['a', 'b']), eb('processed_key', 'in', ['a', 'b'])]),
        )
        .compile();
      const plan = handle.sqlite.prepare(`explain query plan ${text}`).all(...parameters) as Array<{
        detail: string;
      }>;
      const details = plan.map((row) => row.detail).join('\n');
      assert.match(details, /receipts_original_key/, details);
      assert.match(details, /receipts_processed_key/, details);
      assert.doesNotMatch(details, /SCAN receipts/, details);
    }
  });
});
