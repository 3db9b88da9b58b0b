import type pg from 'pg';

/**
 * How long closing PostgreSQL connections may wait for the server's side of the goodbye. pg ends
 * a connection by sending Terminate and waiting for the socket to close, which a server that
 * stopped answering (a frozen host, a hung proxy) never does: SIGTERM waited for it forever.
 */
export const PG_CLOSE_WAIT_MS = 3000;

/**
 * Waits for `closing` at most `waitMs`; then drops the connections with `drop` and goes on (the
 * close finishes when their sockets do). A failed close is not the caller's to handle either.
 */
export async function closedWithin(
  closing: Promise<unknown>,
  drop: () => void,
  waitMs = PG_CLOSE_WAIT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), waitMs);
  });
  const closed = closing.then(
    () => false,
    () => false,
  );
  try {
    if (await Promise.race([closed, late])) drop();
  } finally {
    clearTimeout(timer);
  }
}

/** Closes a client's socket at once, without the goodbye (pg has no public call for it). */
export function dropConnection(client: pg.Client): void {
  (
    client as unknown as { connection?: { stream?: { destroy(): void } } }
  ).connection?.stream?.destroy();
}
