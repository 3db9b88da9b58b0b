/** Ids per statement where a list of them is bound (PostgreSQL and SQLite both cap parameters). */
const CHUNK = 500;

/** `items` in lists of at most CHUNK, for statements that bind each list. */
export const chunks = <T>(items: readonly T[]): T[][] => {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += CHUNK) {
    out.push(items.slice(start, start + CHUNK));
  }
  return out;
};
