import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * CPU time spent by each party to a run, from /proc (Linux): the server under test (its
 * process and its children), PostgreSQL (every process named `postgres`: the backends and the
 * server's own), and this process, the load generator. Divided by the requests of the run it
 * says what one request cost each of them; with the host's cores it says how fast a server
 * could be at most beside the other two (see `ceiling`). Off Linux every figure is null.
 */

/**
 * The parties' CPU times at one moment, in milliseconds (user and system): per process, as a
 * process that exits takes its times with it (a PostgreSQL backend whose connection closed).
 */
export interface CpuTimes {
  server: Map<number, number>;
  postgres: Map<number, number>;
  generator: number;
}

/** Microseconds of CPU per request for each party, and the most a server costing nothing could do. */
export interface CpuPerRequest {
  serverUs: number;
  postgresUs: number;
  generatorUs: number;
  /**
   * Requests per second the host's cores allow when the server itself costs nothing: the
   * cores' time over what PostgreSQL and the load generator spend on one request.
   */
  ceiling: number;
}

/** Clock ticks per second of /proc's CPU times: 100 on every Linux build that matters. */
const TICKS_PER_SECOND = 100;

interface ProcEntry {
  pid: number;
  parent: number;
  name: string;
  cpuMs: number;
}

function procEntries(): ProcEntry[] {
  const entries: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone since the directory was read
    }
    // `pid (comm) state ppid … utime stime`: comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    entries.push({
      pid: Number(name),
      parent: Number(fields[1]),
      name: stat.slice(stat.indexOf('(') + 1, close),
      cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND,
    });
  }
  return entries;
}

/** The parties' CPU times now, or null where /proc cannot tell (off Linux). */
export function cpuTimes(serverPid: number): CpuTimes | null {
  if (process.platform !== 'linux') return null;
  const entries = procEntries();
  const tree = new Set([serverPid]);
  // Parents before children is not guaranteed by pid order: repeat until nothing joins.
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of entries) {
      if (!tree.has(entry.pid) && tree.has(entry.parent)) {
        tree.add(entry.pid);
        grew = true;
      }
    }
  }
  const times = (keep: (entry: ProcEntry) => boolean) =>
    new Map(entries.filter(keep).map((entry) => [entry.pid, entry.cpuMs]));
  const own = process.cpuUsage();
  return {
    server: times((entry) => tree.has(entry.pid)),
    postgres: times((entry) => entry.name === 'postgres'),
    generator: (own.user + own.system) / 1000,
  };
}

/**
 * The CPU the processes of `after` spent since `before` (all of it for one started since). A
 * process that exited in between is not counted: what it spent since `before` is gone with it.
 */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** What each party spent on one request of a run, from `cpuTimes` before and after it. */
export function cpuPerRequest(
  before: CpuTimes | null,
  after: CpuTimes | null,
  requests: number,
): CpuPerRequest | null {
  if (!before || !after || requests === 0) return null;
  const perRequest = (ms: number) => (ms * 1000) / requests;
  const postgresUs = perRequest(spent(before.postgres, after.postgres));
  const generatorUs = perRequest(after.generator - before.generator);
  return {
    serverUs: perRequest(spent(before.server, after.server)),
    postgresUs,
    generatorUs,
    ceiling: (availableParallelism() * 1_000_000) / (postgresUs + generatorUs),
  };
}
