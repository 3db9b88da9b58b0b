/**
 * Serialized JSON answers, kept under a key that holds the company's data version, so an
 * entry is never served once an import changed the data it was made from (see
 * `companyDataVersion`). Kept as UTF-8 bytes, encoded once: an answer sent again is written
 * as it is, without a new copy per request. Bounded by a byte budget; the least recently used
 * entries go first. Per process: instances do not share it, and need not.
 *
 * An answer is kept the second time it is made, not the first: most of what an integrator
 * reads (a sync's pages) is asked for once per data version, and keeping each of those
 * pushed out the answers asked again and again (a dashboard's) while churning the budget's
 * worth of buffers, which the garbage collector then had to find (docs/performance.md, item
 * 64). The keys made once are remembered by a hash, in two generations of at most
 * `SEEN_PER_GENERATION` each (a collision only keeps an answer one request early).
 */
export class ResponseCache {
  private readonly entries = new Map<string, Buffer>();
  private size = 0;
  /** Hashes of keys whose answer was made once and not kept: this generation and the last. */
  private seen = new Set<number>();
  private seenBefore = new Set<number>();
  /** Look-ups that found an answer, and that did not (for the metrics). */
  hits = 0;
  misses = 0;

  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** What the kept answers and their keys take, within the budget. */
  get bytes(): number {
    return this.size;
  }

  get(key: string): Buffer | undefined {
    const body = this.entries.get(key);
    if (body !== undefined) {
      this.hits += 1;
      // Refresh its place in the LRU order.
      this.entries.delete(key);
      this.entries.set(key, body);
    } else {
      this.misses += 1;
    }
    return body;
  }

  /** Keeps a copy of `json` (text, or its UTF-8 bytes). */
  set(key: string, json: string | Buffer): void {
    if (this.firstTime(key)) return;
    // A buffer of its own, never the one given: below 4 KB `Buffer.from` returns a slice of
    // Node's shared 8 KB pool, and a kept slice keeps the whole slab alive. Kept answers of
    // ~1.5 KB then held over twice the budget (40 MB of buffers for a 16 MB cache, measured
    // under load on `/expenses/{id}`).
    const body = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
    if (typeof json === 'string') body.write(json);
    else json.copy(body);
    const size = sizeOf(key, body);
    // One answer may not take more than an eighth of the budget.
    if (size > this.maxBytes / 8) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.size -= sizeOf(key, previous);
    }
    this.entries.set(key, body);
    this.size += size;
    for (const [oldest, oldBody] of this.entries) {
      if (this.size <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.size -= sizeOf(oldest, oldBody);
    }
  }

  /** Whether this is the first time the key's answer is made (remembering it if so). */
  private firstTime(key: string): boolean {
    const hash = fnv1a(key);
    if (this.seen.has(hash) || this.seenBefore.has(hash)) return false;
    if (this.seen.size >= SEEN_PER_GENERATION) {
      this.seenBefore = this.seen;
      this.seen = new Set();
    }
    this.seen.add(hash);
    return true;
  }
}

/** FNV-1a, 32 bits, over the key's UTF-16 code units: cheap, and spread well enough here. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Keys made once are remembered in generations of this many (both: about 220 KB of heap). */
const SEEN_PER_GENERATION = 4096;

// A JavaScript string (the key) holds up to two bytes a character.
const sizeOf = (key: string, body: Buffer): number => 2 * key.length + body.length;
