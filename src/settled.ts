/**
 * Waits for every one of `work` to settle, then throws the failure of the first (in the order
 * given) that failed, if any: nothing is left running behind the error, and the error reported
 * is the earliest one (an import's batches are in file order).
 */
export async function settleAll(work: Iterable<Promise<unknown>>): Promise<void> {
  for (const outcome of await Promise.allSettled(work)) {
    if (outcome.status === 'rejected') throw outcome.reason;
  }
}
