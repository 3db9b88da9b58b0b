/**
 * `Accept-Encoding` as @fastify/compress should read it. The plugin reads every `*` as `gzip`,
 * which every client decodes (one that sends `*` alone gets gzip, not a coding it may not
 * know); but RFC 9110 §12.5.3 has `*` match only codings the field does not list, so with
 * gzip listed, `gzip;q=0, *` would get gzip. Where the field names gzip itself (or its alias
 * `x-gzip`), its `*` entries are set aside: `gzip;q=0, *` gets no compression, as an
 * uncompressed answer is always acceptable. Any other field is returned as it is.
 */
export function wildcardSetAside(field: string): string {
  if (!field.includes('*')) return field;
  const entries = field.split(',').map((entry) => entry.trim());
  const nameOf = (entry: string) => (entry.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (!entries.some((entry) => nameOf(entry) === 'gzip' || nameOf(entry) === 'x-gzip')) {
    return field;
  }
  return entries.filter((entry) => nameOf(entry) !== '*').join(', ');
}
