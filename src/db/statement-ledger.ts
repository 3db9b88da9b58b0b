import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The statements one answer sends to PostgreSQL, counted as they are sent, so that an answer
 * whose last statement read the company's data version beside its rows need not read it again
 * in a statement of its own (see `readWithinOneVersion`). A page of a list reads its ids and
 * total, then its rows: with the version read once the answer was made, three statements, and
 * each costs the event loop its round trip on PostgreSQL (docs/performance.md, item 106).
 *
 * A statement's rows carry the version in the column VERSION_COLUMN (see `companyVersion`),
 * read in that statement's own snapshot. It stands for the whole answer only when that
 * statement was the answer's last one sent and no other of its statements was still running
 * when it was sent: every other statement was answered before it began, so none read a newer
 * state than the version it read. A statement sent after it (an embedded employee looked up by
 * key, a walk's anchors made in the background), or one running beside it, leaves the answer
 * without one, and the version is read again as before.
 *
 * Only PostgreSQL's pool counts (`planningOncePool`): on SQLite the version is read on the
 * event loop in microseconds, and an answer there always reads it again.
 */
export const VERSION_COLUMN = 'company_data_version';

interface Ledger {
  /** Statements sent so far. */
  sent: number;
  /** Statements sent and not answered yet. */
  running: number;
  /** The version read by statement number `at`, sent while none other was running. */
  versionRead?: { version: number; at: number };
}

const ledgers = new AsyncLocalStorage<Ledger>();

/**
 * Runs `read` with the statements it sends counted; with its result, the version its last
 * statement read beside its rows, where that statement stands for the whole answer (above).
 */
export async function readCounted<T>(
  read: () => Promise<T>,
): Promise<{ result: T; versionRead: number | undefined }> {
  const ledger: Ledger = { sent: 0, running: 0 };
  const result = await ledgers.run(ledger, read);
  const last = ledger.versionRead;
  return { result, versionRead: last?.at === ledger.sent ? last.version : undefined };
}

/** Sends one statement with `send`, counted in the ledger of the answer that sends it, if any. */
export async function counted<R extends { rows: unknown[] }>(send: () => Promise<R>): Promise<R> {
  const ledger = ledgers.getStore();
  if (!ledger) return send();
  const at = ++ledger.sent;
  const alone = ledger.running === 0;
  ledger.running++;
  try {
    const result = await send();
    const version = (result.rows[0] as Record<string, unknown> | undefined)?.[VERSION_COLUMN];
    if (alone && typeof version === 'number') ledger.versionRead = { version, at };
    return result;
  } finally {
    ledger.running--;
  }
}
