import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { parseExactJson } from '../decimal.ts';
import { ImportError } from './import-error.ts';

/** One parsed line of an NDJSON file. */
export interface SourceRecord {
  line: number;
  value: unknown;
}

/** Bytes read from the file at a time; each read becomes one batch of records. */
export const READ_CHUNK_BYTES = 1 << 16;

/**
 * The longest line taken, its line break not counted: 1 MiB. The largest valid record fits (an
 * expense of 500 items, every text at its longest and every character a `\uXXXX` escape, is
 * about 864 KB), and a longer line is refused as soon as it is seen, so a file without line
 * breaks is never held in memory whole.
 */
export const MAX_LINE_BYTES = 1 << 20;

export const NOT_UTF8 = 'not valid UTF-8 text';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads an NDJSON file in chunks and yields the records of each chunk together; memory stays
 * flat whatever the file's size. Line numbers count every line, blank ones included.
 * `onRead` hears how far the reading has come after each chunk.
 */
export async function* readNdjson(
  file: string,
  onRead?: (progress: { bytesRead: number; records: number }) => void,
): AsyncGenerator<SourceRecord[]> {
  const stream = createReadStream(file, { highWaterMark: READ_CHUNK_BYTES });
  let records = 0;
  for await (const batch of parseNdjson(stream as AsyncIterable<Buffer>)) {
    records += batch.length;
    onRead?.({ bytesRead: stream.bytesRead, records });
    yield batch;
  }
}

/**
 * Splits the bytes into lines (at LF, CRLF or a lone CR, as readline does) in one pass: each
 * byte is looked at a bounded number of times and a line is joined once, when it ends, however
 * many chunks it spans.
 */
export async function* parseNdjson(chunks: AsyncIterable<Buffer>): AsyncGenerator<SourceRecord[]> {
  let line = 0;
  // The start of the line being read, in the chunks before this one.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // The last chunk ended with a CR: an LF opening this one is the second half of a CRLF.
  let afterCr = false;
  const tooLong = () =>
    new ImportError(line + 1, '(line)', `is longer than ${MAX_LINE_BYTES} bytes (1 MiB)`);
  const take = (bytes: Buffer): SourceRecord | null => {
    line += 1;
    return parseLine(bytes, line);
  };
  for await (const chunk of chunks) {
    const records: SourceRecord[] = [];
    try {
      splitChunk(chunk, records);
    } catch (error) {
      // The lines before the unreadable one come first: a bad record among them is the first
      // problem of the file, and the one to report.
      if (records.length > 0) yield records;
      throw error;
    }
    yield records;
  }
  // The last line, when the file does not end with a line break.
  if (pending.length > 0) {
    const last = take(Buffer.concat(pending));
    if (last) yield [last];
  }

  /** Adds the chunk's whole lines to `records`, keeping the start of an unfinished one. */
  function splitChunk(chunk: Buffer, records: SourceRecord[]): void {
    let start = afterCr && chunk[0] === LF ? 1 : 0;
    afterCr = false;
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      if (pendingBytes + end - start > MAX_LINE_BYTES) throw tooLong();
      const bytes =
        pending.length === 0
          ? chunk.subarray(start, end)
          : Buffer.concat([...pending, chunk.subarray(start, end)]);
      pending = [];
      pendingBytes = 0;
      const record = take(bytes);
      if (record) records.push(record);
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) afterCr = true;
        else if (chunk[start] === LF) start += 1;
      }
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_LINE_BYTES) throw tooLong();
      pending.push(chunk.subarray(start));
    }
  }
}

/** Ahead of JSON.parse, which would take `\ud800` for a character, lone surrogates and all. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * JSON.parse's reason, without the text it quotes: V8's "Unexpected token" names the character
 * and the text around it, which may be part of a salary, an IBAN or a national id (an error
 * reaches stderr, CI logs and the admin API's answer). Its other reasons name only the JSON
 * grammar and a position.
 */
function jsonReason(error: Error): string {
  return error.message.startsWith('Unexpected token')
    ? 'an unexpected character'
    : error.message.replace(/ in JSON at position \d+ \(line \d+ column (\d+)\)$/, ' at column $1');
}

/**
 * One line's record, or null for a blank line. Text must be UTF-8 throughout: bytes that are
 * not (`\xff`, an overlong `\xc0\xaf`, an encoded surrogate) and `\u` escapes of a lone
 * surrogate are refused, naming the field they are in. Neither database could store them
 * alike (SQLite keeps the bytes, PostgreSQL refuses or replaces them).
 */
function parseLine(bytes: Buffer, line: number): SourceRecord | null {
  let text = bytes.toString('utf8');
  // Every byte sequence that is not UTF-8 decodes as U+FFFD; a real U+FFFD is rare.
  const utf8 = !text.includes('\uFFFD') || isUtf8(bytes);
  if (!utf8) text = decodeMarkingInvalid(bytes);
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = parseExactJson(text);
  } catch (error) {
    // A byte that is not UTF-8 outside a string is what makes the line unreadable.
    if (!utf8) throw new ImportError(line, '(line)', NOT_UTF8);
    throw new ImportError(line, '(line)', `is not valid JSON (${jsonReason(error as Error)})`);
  }
  if (!utf8 || (text.includes('\\u') && SURROGATE_ESCAPE.test(text))) {
    const field = illFormedField(value);
    if (field !== null || !utf8) throw new ImportError(line, field ?? '(line)', NOT_UTF8);
  }
  return { line, value };
}

/**
 * Where the first string (key or value) holding a lone surrogate is, as the importer names
 * fields (`title`, `items[0].name`); null when there is none. Walked with a stack of its own:
 * JSON.parse takes nesting deeper than a recursive walk could follow.
 */
function illFormedField(value: unknown): string | null {
  const stack: Array<[value: unknown, path: string]> = [[value, '']];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [current, path] = top;
    if (typeof current === 'string') {
      if (!current.isWellFormed()) return path || '(record)';
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    const children: Array<[unknown, string]> = [];
    if (Array.isArray(current)) {
      for (const [i, item] of current.entries()) children.push([item, `${path}[${i}]`]);
    } else {
      for (const [key, item] of Object.entries(current)) {
        const name = path ? `${path}.${key}` : key;
        if (!key.isWellFormed()) return name.toWellFormed();
        children.push([item, name]);
      }
    }
    // Pushed last to first, so the walk goes in the line's own order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as [unknown, string]);
  }
  return null;
}

/**
 * The bytes as text with each byte that is not part of a well-formed UTF-8 sequence read as
 * U+DFFF, a lone surrogate that no UTF-8 can give: the check for the surrogates of `\u`
 * escapes then finds these in their field too. Only lines that are not UTF-8 come here.
 */
function decodeMarkingInvalid(bytes: Buffer): string {
  let text = '';
  let from = 0;
  let at = 0;
  while (at < bytes.length) {
    const length = sequenceLength(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    text += `${bytes.toString('utf8', from, at)}\uDFFF`;
    at += 1;
    from = at;
  }
  return text + bytes.toString('utf8', from);
}

/** The length of the well-formed UTF-8 sequence at `at` (Unicode's table 3-7), else 0. */
function sequenceLength(bytes: Buffer, at: number): number {
  const lead = bytes[at] as number;
  const follows = (offset: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at + offset];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return follows(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    // E0 needs A0 or more (shorter forms are overlong); ED at most 9F (no surrogates).
    const second = follows(1, lead === 0xe0 ? 0xa0 : 0x80, lead === 0xed ? 0x9f : 0xbf);
    return second && follows(2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    // F0 needs 90 or more (shorter forms are overlong); F4 at most 8F (U+10FFFF is the last).
    const second = follows(1, lead === 0xf0 ? 0x90 : 0x80, lead === 0xf4 ? 0x8f : 0xbf);
    return second && follows(2) && follows(3) ? 4 : 0;
  }
  return 0;
}
