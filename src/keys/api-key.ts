import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `cdk_` + 32 random base62 characters (190 bits) + a 6-character base62
 * CRC32 of the random part. The fixed prefix and the checksum let secret scanners recognise
 * a leaked key without a database; only the SHA-256 digest of a key is ever stored.
 */
export const KEY_PREFIX = 'cdk_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** How much of a key `keys list` shows: the fixed prefix and the first 8 random characters. */
export const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(random: string): string {
  return base62(crc32(random), CHECKSUM_LENGTH);
}

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateApiKey(): GeneratedKey {
  const random = randomBase62(RANDOM_LENGTH);
  const key = `${KEY_PREFIX}${random}${checksum(random)}`;
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashApiKey(key) };
}

/**
 * True when the text holds a key's random part and checksum, with or without `cdk_`: 38 letters
 * and digits in a row whose last 6 are the checksum of the 32 before them (1 in 56 billion for
 * any other 38 characters).
 */
export function holdsApiKeySecret(text: string): boolean {
  const length = RANDOM_LENGTH + CHECKSUM_LENGTH;
  for (const run of text.match(/[0-9A-Za-z]+/g) ?? []) {
    for (let start = 0; start + length <= run.length; start += 1) {
      const random = run.slice(start, start + RANDOM_LENGTH);
      if (run.slice(start + RANDOM_LENGTH, start + length) === checksum(random)) return true;
    }
  }
  return false;
}

/** True when the text has the key format and a matching checksum (says nothing of validity). */
export function isWellFormedApiKey(text: string): boolean {
  if (!KEY_PATTERN.test(text)) return false;
  const random = text.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return text.slice(KEY_PREFIX.length + RANDOM_LENGTH) === checksum(random);
}
