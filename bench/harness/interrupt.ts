import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/**
 * What a benchmark must undo when it is stopped by a signal rather than by its own end: the
 * services it started (else they run on under PID 1, holding their port and their database
 * connections) and its scratch files. A Ctrl-C reaches the whole process group, the services
 * too; `kill PID` of the harness alone (a CI timeout) reaches only the harness.
 */
const cleanups = new Set<() => void | Promise<void>>();
let listening = false;

/** How long a child stopped by SIGTERM may take to end before the next cleanup runs anyway. */
const CHILD_STOP_MS = 15_000;

/**
 * Runs `cleanup` if a signal stops the benchmark, the latest registered first (a process is
 * stopped before the files it writes are removed); the returned function forgets it.
 */
export function onInterrupt(cleanup: () => void | Promise<void>): () => void {
  cleanups.add(cleanup);
  if (!listening) {
    listening = true;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, async () => {
        for (const each of [...cleanups].reverse()) await each();
        process.exit(128 + constants.signals[signal]);
      });
    }
  }
  return () => cleanups.delete(cleanup);
}

/**
 * Sends `child` SIGTERM if a signal stops the benchmark while it runs, and waits for it to end;
 * with `group`, to the process group it leads (spawned `detached`), so a program run under GNU
 * time stops too (time itself would die and leave it running).
 */
export function stopOnInterrupt(child: ChildProcess, { group = false } = {}): void {
  const forget = onInterrupt(async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const target = group ? -child.pid : child.pid;
    try {
      process.kill(target, 'SIGTERM');
    } catch {
      return; // Gone between the check and the signal.
    }
    // Until every process of it has ended: GNU time dies of the signal at once, while the
    // program it ran still rolls back and closes its files.
    const deadline = Date.now() + CHILD_STOP_MS;
    while (Date.now() < deadline && isAlive(target)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  child.once('exit', forget);
}

/** Whether the process (or, negative, the process group) still has a process to signal. */
export function isAlive(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch {
    return false;
  }
}
