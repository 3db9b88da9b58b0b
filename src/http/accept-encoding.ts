/**
 * `Accept-Encoding` as @fastify/compress should read it. The plugin reads every `*` and every
 * `x-gzip` as `gzip`, then takes the best of the entries. `*` alone so gets gzip, which every
 * client decodes (not a coding it may not know). Two readings are set right here:
 * - RFC 9110 §12.5.3 has `*` match only codings the field does not list, so with gzip listed,
 *   `gzip;q=0, *` would get gzip: where the field names gzip (or its alias `x-gzip`), its `*`
 *   entries are set aside, and `gzip;q=0, *` gets no compression, as an uncompressed answer
 *   is always acceptable.
 * - `x-gzip` is gzip under another name: where either name is refused (`q=0`), the entries
 *   that accept the other are set aside too, so `gzip;q=0, x-gzip` gets no gzip.
 * Any other field is returned as it is.
 */
export function forCompression(field: string): string {
  if (!MAY_NEED_READING.test(field)) return field;
  const entries = entriesOf(field);
  if (!entries.some(isGzip)) return field;
  const gzipRefused = entries.some((entry) => isGzip(entry) && entry.refused);
  return entries
    .filter((entry) => entry.name !== '*' && !(gzipRefused && isGzip(entry) && !entry.refused))
    .map((entry) => entry.text)
    .join(', ');
}

/**
 * Whether `Accept-Encoding` names gzip (or x-gzip) with a weight above zero: where a listener
 * without the compression plugin (the metrics one) compresses. `*` is left aside.
 */
export const acceptsGzip = (field: string | undefined): boolean =>
  entriesOf(field ?? '').some((entry) => isGzip(entry) && !entry.refused);

/** The field's entries: each as written, its coding in lower case, and whether `q=0` refuses it. */
function entriesOf(field: string) {
  return field.split(',').map((entry) => {
    const [name = '', ...parameters] = entry.split(';').map((part) => part.trim());
    const refused = parameters.some((parameter) => Q_ZERO.test(parameter));
    return { text: entry.trim(), name: name.toLowerCase(), refused };
  });
}

const isGzip = ({ name }: { name: string }) => name === 'gzip' || name === 'x-gzip';

const MAY_NEED_READING = /\*|x-gzip/i;
/** A weight of zero, as RFC 9110 §12.4.2 writes it: `q=0`, `q=0.`, `q=0.000`. */
const Q_ZERO = /^q\s*=\s*0(\.0{0,3})?$/i;
