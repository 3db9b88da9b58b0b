import assert from 'node:assert/strict';
import { closeSync, ftruncateSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ImportError } from '../../src/import/import-error.ts';
import {
  MAX_LINE_BYTES,
  NOT_UTF8,
  parseNdjson,
  READ_CHUNK_BYTES,
  readNdjson,
  type SourceRecord,
} from '../../src/import/ndjson.ts';
import { useTempDir } from '../helpers/databases.ts';

/** The file is read 64 KiB at a time: line breaks must survive any chunk boundary. */
const CHUNK = READ_CHUNK_BYTES;

const readAll = (file: string) => readAllOf(readNdjson(file));

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

  it('reads a line spread over many chunks, and one of exactly 1 MiB', async (t) => {
    const file = join(useTempDir(t), 'data.ndjson');
    // Lines longer than a chunk, one at the limit with its CRLF not counted, the last without
    // a line break.
    writeFileSync(
      file,
      `${lineOf(1, 5 * CHUNK + 17)}\n${lineOf(2, MAX_LINE_BYTES)}\r\n${lineOf(3, 3 * CHUNK)}`,
    );
    const records = await readAll(file);
    assert.deepEqual(
      records.map((r) => r.line),
      [1, 2, 3],
    );
    assert.equal(JSON.stringify(records[1]?.value).length, MAX_LINE_BYTES);
  });

  it('refuses a line over 1 MiB as soon as it has read past the limit, naming the line', async () => {
    let chunks = 0;
    // A second line that never ends: only refusing it early ends the read.
    async function* endless(): AsyncGenerator<Buffer> {
      chunks += 1;
      yield Buffer.from(`${lineOf(1, 100)}\n{"n":2,"pad":"`);
      const pad = Buffer.alloc(CHUNK, 'x');
      for (;;) {
        chunks += 1;
        yield pad;
      }
    }
    await assert.rejects(readAllOf(parseNdjson(endless())), {
      message: `line 2: (line): is longer than ${MAX_LINE_BYTES} bytes (1 MiB)`,
    });
    // The first chunk, then the 16 that take the line past 1 MiB and not one more: memory is
    // bounded by the limit, not by the line.
    assert.equal(chunks, 1 + MAX_LINE_BYTES / CHUNK);
  });

  it('refuses a 100 MB file without a line break, naming line 1', async (t) => {
    const file = join(useTempDir(t), 'one-line.ndjson');
    // A sparse file: 100 MB of NUL bytes (UTF-8, and no line break) that cost no disk.
    const fd = openSync(file, 'w');
    writeSync(fd, '{"type":"company","name":"');
    ftruncateSync(fd, 100 * 1000 * 1000);
    closeSync(fd);
    await assert.rejects(readAll(file), {
      message: `line 1: (line): is longer than ${MAX_LINE_BYTES} bytes (1 MiB)`,
    });
  });

  describe('text that is not UTF-8', () => {
    /** A JSON line with `bytes` put raw inside the string at `@@`. */
    const withBytes = (json: string, ...bytes: number[]) => {
      const [before, after] = json.split('@@') as [string, string];
      return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
    };
    const refused: Array<[label: string, line: Buffer | string, field: string]> = [
      ['bytes FF FE', withBytes('{"type":"company","name":"Acme @@"}', 0xff, 0xfe), 'name'],
      ['an overlong slash C0 AF', withBytes('{"title":"a@@b"}', 0xc0, 0xaf), 'title'],
      ['an overlong E0 80 AF', withBytes('{"title":"@@"}', 0xe0, 0x80, 0xaf), 'title'],
      [
        'a surrogate encoded as ED A0 80',
        withBytes('{"first_name":"@@"}', 0xed, 0xa0, 0x80),
        'first_name',
      ],
      ['a code point past U+10FFFF', withBytes('{"title":"@@"}', 0xf4, 0x90, 0x80, 0x80), 'title'],
      ['a sequence cut short', withBytes('{"title":"€@@"}', 0xe2, 0x82), 'title'],
      ['a lone continuation byte', withBytes('{"title":"@@"}', 0x80), 'title'],
      ['a lone high surrogate escape', '{"title":"\\ud800"}', 'title'],
      ['a lone low surrogate escape', '{"title":"x\\uDC00y"}', 'title'],
      ['surrogates in the wrong order', '{"title":"\\udc00\\ud800"}', 'title'],
      [
        'a surrogate in a nested field',
        '{"items":[{"name":"ok"},{"name":"\\ud83d"}]}',
        'items[1].name',
      ],
      [
        'bytes in a nested field',
        withBytes('{"receipt":{"original":"@@.jpg"}}', 0xff),
        'receipt.original',
      ],
      ['bytes in a field the importer ignores', withBytes('{"note":"@@"}', 0xfe), 'note'],
      ['bytes in a key', withBytes('{"na@@me":"x"}', 0xff), 'na\uFFFDme'],
      ['a surrogate escape in a key', '{"a":{"\\ud800":1}}', 'a.\uFFFD'],
      ['bytes outside any string', withBytes('{"n":1@@}', 0xff), '(line)'],
      ['a line of nothing but such bytes', Buffer.from([0xff, 0xfe]), '(line)'],
      ['a string that is the whole line', '"\\ud800"', '(record)'],
    ];
    for (const [label, line, field] of refused) {
      it(`refuses ${label}, naming the line and field`, async (t) => {
        const file = join(useTempDir(t), 'data.ndjson');
        writeFileSync(file, Buffer.concat([Buffer.from(`${lineOf(1, 40)}\n`), Buffer.from(line)]));
        await assert.rejects(readAll(file), (error: unknown) => {
          assert.ok(error instanceof ImportError, String(error));
          assert.equal(error.message, `line 2: ${field}: ${NOT_UTF8}`);
          return true;
        });
      });
    }

    it('takes every well-formed text: U+FFFD itself, astral characters raw and as escape pairs', async (t) => {
      const file = join(useTempDir(t), 'data.ndjson');
      const texts = [
        '\uFFFD',
        'Ayşe 😀 𝄞',
        '\\ud83d\\ude00',
        '\\\\ud800 (a backslash, not an escape)',
      ];
      writeFileSync(file, texts.map((text) => `{"title":"${text}"}`).join('\n'));
      const records = await readAll(file);
      assert.deepEqual(
        records.map((r) => (r.value as { title: string }).title),
        ['\uFFFD', 'Ayşe 😀 𝄞', '😀', '\\ud800 (a backslash, not an escape)'],
      );
    });
  });
});

async function readAllOf(source: AsyncIterable<SourceRecord[]>): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const batch of source) records.push(...batch);
  return records;
}
