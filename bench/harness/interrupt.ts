import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/**
 * What a benchmark must undo when it is stopped by a signal rather than by its own end: the
 * services it started (else they run on under PID 1, holding their port and their database
 * connections) and its scratch files. A Ctrl-C reaches the whole process group, the services
 * too; `kill PID` of the harness alone (a CI timeout) reaches only the harness.
 */
const cleanups = new Set<() => void>();
let listening = false;

/** Runs `cleanup` (synchronous) if a signal stops the benchmark; the returned function forgets it. */
export function onInterrupt(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  if (!listening) {
    listening = true;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        for (const each of cleanups) each();
        process.exit(128 + constants.signals[signal]);
      });
    }
  }
  return () => cleanups.delete(cleanup);
}

/**
 * Sends `child` SIGTERM if a signal stops the benchmark while it runs; with `group`, to the
 * process group it leads (spawned `detached`), so a program run under GNU time stops too (time
 * itself would die and leave it running).
 */
export function stopOnInterrupt(child: ChildProcess, { group = false } = {}): void {
  const forget = onInterrupt(() => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(group ? -child.pid : child.pid, 'SIGTERM');
    } catch {
      // Gone between the check and the signal.
    }
  });
  child.once('exit', forget);
}
