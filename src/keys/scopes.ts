export const SCOPES = ['leaves.read', 'expenses.read'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_PER_MINUTE = 120;
export const DEFAULT_PER_HOUR = 3000;
/** The highest `per_minute` or `per_hour` a key may be given. */
export const MAX_RATE = 1_000_000_000;

/** A key's label: 1 to 100 characters, not blank (the admin API's schema says the same). */
export const KEY_NAME_MAX_LENGTH = 100;
export const isValidKeyName = (name: string): boolean =>
  name.trim() !== '' && name.length <= KEY_NAME_MAX_LENGTH;

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
