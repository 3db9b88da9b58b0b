import { createHash } from 'node:crypto';
import { ConfigError } from './config-error.ts';

/**
 * An admin token (`ADMIN_TOKEN`, `ADMIN_TOKEN_PREVIOUS`) checked and reduced to what the
 * configuration keeps of it.
 */

/**
 * A token the admin API accepts: its SHA-256 digest (never the token), its length (to find it
 * inside a longer text, such as a request id) and its audit label.
 */
export interface AdminToken {
  readonly label: string;
  readonly sha256: Buffer;
  readonly length: number;
}

/** At least this long: 32 characters of `openssl rand -base64 32`'s 44 are 190 bits. */
const ADMIN_TOKEN_MIN_LENGTH = 32;
/** At most this long: the longest bearer token the admin listener reads (src/admin/auth.ts). */
export const ADMIN_TOKEN_MAX_LENGTH = 512;

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
  return Object.freeze({
    label,
    sha256: createHash('sha256').update(raw).digest(),
    length: raw.length,
  });
}
