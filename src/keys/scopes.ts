import { characterCount } from '../resources/fields.ts';

export const SCOPES = ['leaves.read', 'expenses.read'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_PER_MINUTE = 120;
export const DEFAULT_PER_HOUR = 3000;
/** The highest `per_minute` or `per_hour` a key may be given. */
export const MAX_RATE = 1_000_000_000;

/**
 * A key's label: 1 to 100 characters, not blank, and no control character (a line break or an
 * escape would break the lines of `cdapi keys list`); the admin API's schema takes the same
 * pattern.
 */
export const KEY_NAME_MAX_LENGTH = 100;
export const KEY_NAME_RULE = `must be 1 to ${KEY_NAME_MAX_LENGTH} characters, not blank, without control characters (line breaks, tabs) or lone surrogates (\\ud800)`;
// C0 and C1 controls, the line and paragraph separators, which end a line too, and lone
// surrogates (a JSON body's `\ud800` escape), which no UTF-8 can store: SQLite would keep U+FFFD.
// The patterns run with the `u` flag, so a pair of surrogates is one character, not two.
const CONTROLS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\ud800-\\udfff';
export const KEY_NAME_PATTERN = `^[^${CONTROLS}]*[^\\s${CONTROLS}][^${CONTROLS}]*$`;
const KEY_NAME = new RegExp(KEY_NAME_PATTERN, 'u');
export const isValidKeyName = (name: string): boolean =>
  KEY_NAME.test(name) && characterCount(name) <= KEY_NAME_MAX_LENGTH;

/** Parses `leaves.read,expenses.read`; throws naming the first unknown scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = text.split(',').map((s) => s.trim());
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new Error(`unknown scope "${scope}" (known: ${SCOPES.join(', ')})`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}
