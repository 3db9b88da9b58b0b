import { createHash } from 'node:crypto';
import { ConfigError } from './config-error.ts';

/**
 * An admin token (`ADMIN_TOKEN`, `ADMIN_TOKEN_PREVIOUS`) checked and reduced to what the
 * configuration keeps of it.
 */

/**
 * A token the admin API accepts: its SHA-256 digest (never the token), the digests of its
 * stretches (to find it, or most of it, inside another text, such as a request id) and its
 * audit label.
 */
export interface AdminToken {
  readonly label: string;
  readonly sha256: Buffer;
  /** The base64 SHA-256 digest of each ADMIN_TOKEN_STRETCH characters in a row of the token. */
  readonly stretches: ReadonlySet<string>;
}

/** At least this long: 32 characters of `openssl rand -base64 32`'s 44 are 190 bits. */
const ADMIN_TOKEN_MIN_LENGTH = 32;
/** At most this long: the longest bearer token the admin listener reads (src/admin/auth.ts). */
export const ADMIN_TOKEN_MAX_LENGTH = 512;
/**
 * A text holding this many characters in a row of a token holds most of it (24 of `openssl rand
 * -base64 32`'s characters are 144 bits, beyond guessing; the rest of a token a text holds all
 * but a few characters of is not).
 */
export const ADMIN_TOKEN_STRETCH = 24;

const digest = (text: string) => createHash('sha256').update(text).digest();

export function adminToken(variable: string, raw: string, label: string): AdminToken {
  if (
    raw.length < ADMIN_TOKEN_MIN_LENGTH ||
    raw.length > ADMIN_TOKEN_MAX_LENGTH ||
    !/^[\x21-\x7e]+$/.test(raw)
  ) {
    throw new ConfigError(
      variable,
      `must be ${ADMIN_TOKEN_MIN_LENGTH} to ${ADMIN_TOKEN_MAX_LENGTH} printable characters without spaces (e.g. openssl rand -base64 32)`,
    );
  }
  const stretches = new Set<string>();
  for (let start = 0; start + ADMIN_TOKEN_STRETCH <= raw.length; start++) {
    stretches.add(digest(raw.slice(start, start + ADMIN_TOKEN_STRETCH)).toString('base64'));
  }
  return Object.freeze({ label, sha256: digest(raw), stretches });
}
