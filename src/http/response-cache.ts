/**
 * Serialized JSON answers, kept under a key that holds the company's data version, so an
 * entry is never served once an import changed the data it was made from (see
 * `companyDataVersion`). Bounded by an approximate byte budget; the least recently used
 * entries go first. Per process: instances do not share it, and need not.
 */
export class ResponseCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const body = this.entries.get(key);
    if (body !== undefined) {
      // Refresh its place in the LRU order.
      this.entries.delete(key);
      this.entries.set(key, body);
    }
    return body;
  }

  set(key: string, body: string): void {
    // A JavaScript string holds up to two bytes a character.
    const size = sizeOf(key, body);
    // One answer may not take more than an eighth of the budget.
    if (size > this.maxBytes / 8) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= sizeOf(key, previous);
    }
    this.entries.set(key, body);
    this.bytes += size;
    for (const [oldest, oldBody] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= sizeOf(oldest, oldBody);
    }
  }

  /** Entries and approximate bytes held (for tests). */
  stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

const sizeOf = (key: string, body: string): number => 2 * (key.length + body.length);
