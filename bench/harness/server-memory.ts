import { readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * The PostgreSQL server's shared memory as a run's figures depend on it, for the report's
 * header: on the 2-core bench host, huge pages took PostgreSQL's CPU a request under the cold
 * mix from 3.04 to 2.70 ms, and 1 GB of shared buffers without them made it 4.75 ms
 * (docs/performance.md, 2026-12-05, night). PostgreSQL 15 does not say whether it got huge
 * pages (`huge_pages = try` falls back to 4 KB pages silently), so where the server runs on this
 * host (a loopback address or a socket directory) this host's own count is told beside it.
 */
export interface ServerMemory {
  /** `shared_buffers` and `huge_pages` as the server shows them (`128MB`, `try`). */
  sharedBuffers: string;
  hugePages: string;
  /** This host's huge pages in MB, or null when the server is elsewhere or the host is not Linux. */
  host: HostHugePages | null;
}

export interface HostHugePages {
  reservedMb: number;
  /** Taken by a process (PostgreSQL's shared memory) or promised to one that mapped them. */
  takenMb: number;
}

/** This host's huge pages from the text of /proc/meminfo; null when it names none of them. */
export function hugePagesOf(meminfo: string): HostHugePages | null {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(meminfo);
    return match ? Number(match[1]) : null;
  };
  const total = field('HugePages_Total');
  const free = field('HugePages_Free');
  const promised = field('HugePages_Rsvd');
  const sizeKb = field('Hugepagesize');
  if (total === null || free === null || promised === null || sizeKb === null) return null;
  const mb = (pages: number) => Math.round((pages * sizeKb) / 1024);
  return { reservedMb: mb(total), takenMb: mb(total - free + promised) };
}

/** Whether a postgres:// URL reaches a server on this host: a loopback address or a socket. */
export function isOnThisHost(url: string): boolean {
  const parsed = new URL(url);
  const socket = parsed.searchParams.get('host');
  if (socket?.startsWith('/')) return true;
  return ['', 'localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
}

/** What the header says: `shared_buffers 128MB, huge_pages try (this host: none reserved)`. */
export function describeServerMemory({ sharedBuffers, hugePages, host }: ServerMemory): string {
  const setting = `shared_buffers ${sharedBuffers}, huge_pages ${hugePages}`;
  if (host === null) return setting;
  if (host.reservedMb === 0) return `${setting} (this host: none reserved)`;
  return `${setting} (this host: ${host.reservedMb} MB reserved, ${host.takenMb} MB taken)`;
}

/** The server's settings over `client`, and this host's huge pages when the server is here. */
export async function serverMemory(client: pg.Client, url: string): Promise<ServerMemory> {
  const show = async (setting: string) => {
    const { rows } = await client.query<Record<string, string>>(`SHOW ${setting}`);
    return rows[0]?.[setting] ?? '?';
  };
  let host: HostHugePages | null = null;
  if (process.platform === 'linux' && isOnThisHost(url)) {
    host = hugePagesOf(readFileSync('/proc/meminfo', 'utf8'));
  }
  return { sharedBuffers: await show('shared_buffers'), hugePages: await show('huge_pages'), host };
}
