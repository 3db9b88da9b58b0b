import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importFile } from '../../src/import/importer.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run bench:data -- --size small --out FILE`, as a user runs it. */
function generate(out: string): string {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/data.ts', '--size', 'small', '--out', out],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(result.status, 0, result.stderr);
  return createHash('sha256').update(readFileSync(out)).digest('hex');
}

/**
 * The file, written once for both databases' tests (each writing takes tens of seconds of CPU,
 * which CI's two cores share with the rest of the suite), in a folder removed after them.
 */
const sharedDir = mkdtempSync(join(tmpdir(), 'cdapi-bench-data-'));
after(() => rmSync(sharedDir, { recursive: true, force: true }));
let written: { file: string; digest: string } | undefined;
function writtenOnce() {
  if (!written) {
    const file = join(sharedDir, 'a.ndjson');
    written = { file, digest: generate(file) };
  }
  return written;
}

describeEachDialect('the bench data generator', (dialect) => {
  it('writes the same importable file every time', async (t) => {
    const dir = useTempDir(t);
    const { file, digest } = writtenOnce();
    if (dialect === 'sqlite') assert.equal(generate(join(dir, 'b.ndjson')), digest);
    const database = await useDatabase(t, dialect);
    const summary = await importFile(
      database.handle,
      new FileReceiptStore(join(dir, 'receipts')),
      file,
    );
    assert.deepEqual(summary.counts, {
      company: 21,
      employee: 3000,
      leave_type: 126,
      leave: 60_000,
      expense_category: 168,
      expense: 60_000,
    });
  });
});
