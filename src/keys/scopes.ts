export const SCOPES = ['leaves.read', 'expenses.read'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_PER_MINUTE = 120;
export const DEFAULT_PER_HOUR = 3000;

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
