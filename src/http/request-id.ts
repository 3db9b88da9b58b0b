import { hash } from 'node:crypto';
import type { AdminToken } from '../admin-tokens.ts';
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
 * An API key (or its part after `cdk_`), or one of the admin tokens, anywhere in `text`: each
 * stretch of a token's length is hashed. A token is at least 32 characters and a request id at
 * most 128, so that is at most 97 hashes (under a millisecond), and one for an id no longer
 * than the token, such as a proxy's 32-character `$request_id`. Also any part of the request's
 * own credentials (`authorization`) of SHARED_WITH_CREDENTIALS characters or more, such as a
 * key cut short of its checksum, which holds no checksum to be found by.
 */
function holdsSecret(
  text: string,
  adminTokens: readonly AdminToken[],
  authorization: string | undefined,
): boolean {
  if (text.toLowerCase().includes(KEY_PREFIX) || holdsApiKeySecret(text)) return true;
  if (authorization) {
    for (let start = 0; start + SHARED_WITH_CREDENTIALS <= text.length; start++) {
      if (authorization.includes(text.slice(start, start + SHARED_WITH_CREDENTIALS))) return true;
    }
  }
  return adminTokens.some((token) => {
    for (let start = 0; start + token.length <= text.length; start++) {
      const stretch = text.slice(start, start + token.length);
      if (hash('sha256', stretch, 'buffer').equals(token.sha256)) return true;
    }
    return false;
  });
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
