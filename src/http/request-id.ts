import { hash } from 'node:crypto';
import { ADMIN_TOKEN_STRETCH, type AdminToken } from '../admin-tokens.ts';
import { holdsApiKeySecret, KEY_PREFIX } from '../keys/api-key.ts';

/**
 * Whether the API listener takes a client's own X-Request-Id as the request's id: only a sane
 * one that holds no secret, since the id is written to every log line of the request.
 */

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * How many characters in a row a request id may share with the request's own Authorization
 * header: a key's first 8 random characters are no secret (`keys list` shows them), but its
 * random part without the checksum is the whole key (the checksum is computed from it), and
 * most of it leaves little to guess.
 */
const SHARED_WITH_CREDENTIALS = 12;

/**
 * Letters and digits in a row, upper and lower case mixed, of this length or more: a key's
 * random part, sent without the request's own key or with another one, or most of it (24 of
 * its 32 characters leave 8, 48 bits, to guess; the checksum is computed from them). Request
 * ids in use have no such run: UUIDs and trace ids are hexadecimal in one case, ULIDs are
 * upper case, and a 128-bit id in base64 is 22 characters. (A random 32-character key part
 * has no upper- or no lower-case letter once in 17 million.)
 */
const KEY_LIKE_RUN = new RegExp(`[0-9A-Za-z]{${ADMIN_TOKEN_STRETCH},}`, 'g');

/**
 * An API key (or its part after `cdk_`, or most of its random part), or most of one of the
 * admin tokens, anywhere in `text`: each stretch of ADMIN_TOKEN_STRETCH characters is hashed
 * (at most 105 hashes for a 128-character id, none for an id shorter than the stretch). Also
 * any part of the request's own credentials (`authorization`) of SHARED_WITH_CREDENTIALS
 * characters or more, such as a key cut short of its checksum.
 */
function holdsSecret(
  text: string,
  adminTokens: readonly AdminToken[],
  authorization: string | undefined,
): boolean {
  if (text.toLowerCase().includes(KEY_PREFIX) || holdsApiKeySecret(text)) return true;
  if (text.match(KEY_LIKE_RUN)?.some((run) => /[a-z]/.test(run) && /[A-Z]/.test(run))) return true;
  if (authorization) {
    for (let start = 0; start + SHARED_WITH_CREDENTIALS <= text.length; start++) {
      if (authorization.includes(text.slice(start, start + SHARED_WITH_CREDENTIALS))) return true;
    }
  }
  if (adminTokens.length === 0) return false;
  for (let start = 0; start + ADMIN_TOKEN_STRETCH <= text.length; start++) {
    const stretch = hash('sha256', text.slice(start, start + ADMIN_TOKEN_STRETCH), 'base64');
    if (adminTokens.some((token) => token.stretches.has(stretch))) return true;
  }
  return false;
}

/** A client's own request id that is sane and holds no secret, to be echoed and logged. */
export function takesRequestId(
  given: string | string[] | undefined,
  adminTokens: readonly AdminToken[],
  authorization: string | undefined,
): given is string {
  return (
    typeof given === 'string' &&
    SANE_REQUEST_ID.test(given) &&
    !holdsSecret(given, adminTokens, authorization)
  );
}
