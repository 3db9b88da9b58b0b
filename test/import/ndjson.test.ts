import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ImportError, readNdjson, type SourceRecord } from '../../src/import/importer.ts';
import { useTempDir } from '../helpers/databases.ts';

/** The file is read a mebibyte at a time: line breaks must survive any chunk boundary. */
const CHUNK = 1 << 20;

async function readAll(file: string): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const batch of readNdjson(file)) records.push(...batch);
  return records;
}

/** A JSON line of exactly `length` characters. */
function lineOf(n: number, length: number): string {
  const head = `{"n":${n},"pad":"`;
  return `${head}${'x'.repeat(length - head.length - 2)}"}`;
}

describe('reading an NDJSON file', () => {
  for (const [name, br] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['a lone CR', '\r'],
  ] as const) {
    for (const shift of [-2, -1, 0, 1]) {
      it(`numbers lines split by ${name} across a chunk boundary (shift ${shift})`, async (t) => {
        const file = join(useTempDir(t), 'data.ndjson');
        // The first line break ends `shift` bytes from the first chunk's end (the byte-order
        // mark before it is 3 bytes).
        const first = lineOf(1, CHUNK - 3 - br.length + shift);
        writeFileSync(file, `\uFEFF${first}${br}${lineOf(2, 40)}${br}${br}${lineOf(4, 30)}`);
        const records = await readAll(file);
        assert.deepEqual(
          records.map((r) => [r.line, (r.value as { n: number }).n]),
          [
            [1, 1],
            [2, 2],
            [4, 4],
          ],
        );
      });
    }
  }

  it('names the line of invalid JSON after a chunk boundary', async (t) => {
    const file = join(useTempDir(t), 'data.ndjson');
    const lines = Array.from({ length: 3000 }, (_, i) => lineOf(i + 1, 500));
    lines[2500] = '{"n":2501,';
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    await assert.rejects(readAll(file), (error: unknown) => {
      assert.ok(error instanceof ImportError);
      assert.match(error.message, /^line 2501: \(line\): is not valid JSON/);
      return true;
    });
  });
});
