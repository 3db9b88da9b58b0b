import { createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import type { DemoRecord } from '../src/demo/context.ts';
import { SIZE_NAMES, type Size } from './dataset/companies.ts';
import { benchRecords } from './dataset/generate.ts';

/**
 * Writes the benchmark data set as an import file (docs/import-format.md):
 *   npm run bench:data -- [--size large|small] [--out FILE] [--seed N]
 * The same size and seed always give the same bytes. The file streams to disk, so memory stays
 * flat however large it gets.
 */

const USAGE = 'usage: npm run bench:data -- [--size large|small] [--out FILE] [--seed N]';
/** Text handed to the stream at a time: one write per record would cost more than the JSON. */
const CHUNK_CHARS = 1 << 20;
const PROGRESS_EVERY = 250_000;

interface Options {
  size: Size;
  out: string;
  seed: number;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      out: { type: 'string' },
      seed: { type: 'string', default: '1' },
    },
  });
  const size = SIZE_NAMES.find((name) => name === values.size);
  if (size === undefined) throw new Error(`--size must be one of ${SIZE_NAMES.join(', ')}`);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error('--seed must be a whole number');
  return { size, out: values.out ?? `bench-data/${size}.ndjson`, seed };
}

/** NDJSON in chunks of about CHUNK_CHARS; `onRecords` hears the running record count. */
function* ndjsonChunks(
  records: Iterable<DemoRecord>,
  onRecords: (count: number) => void,
): Generator<string> {
  let lines: string[] = [];
  let chars = 0;
  let count = 0;
  for (const record of records) {
    const line = JSON.stringify(record);
    lines.push(line);
    chars += line.length;
    count++;
    if (chars >= CHUNK_CHARS) {
      yield `${lines.join('\n')}\n`;
      onRecords(count);
      lines = [];
      chars = 0;
    }
  }
  if (lines.length > 0) yield `${lines.join('\n')}\n`;
  onRecords(count);
}

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

async function writeDataSet({ size, out, seed }: Options): Promise<void> {
  const started = performance.now();
  await mkdir(dirname(out), { recursive: true });
  let written = 0;
  let reported = 0;
  const onRecords = (count: number) => {
    written = count;
    if (written - reported < PROGRESS_EVERY) return;
    reported = written - (written % PROGRESS_EVERY);
    console.error(`bench:data: ${written.toLocaleString('en')} records, ${seconds(started)} s`);
  };
  console.error(`bench:data: writing the ${size} data set (seed ${seed}) to ${out}`);
  await pipeline(ndjsonChunks(benchRecords(seed, size), onRecords), createWriteStream(out));
  const megabytes = ((await stat(out)).size / 1e6).toFixed(1);
  console.error(
    `bench:data: wrote ${written.toLocaleString('en')} records to ${out} in ${seconds(started)} s (${megabytes} MB)`,
  );
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

let options: Options;
try {
  options = readOptions();
} catch (error) {
  console.error(`bench:data: ${message(error)}\n${USAGE}`);
  process.exit(2);
}
await writeDataSet(options).catch((error: unknown) => {
  console.error(`bench:data: ${message(error)}`);
  process.exitCode = 1;
});
