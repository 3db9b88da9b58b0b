import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Client, createClient } from '../../client/src/index.ts';
import { cellOf, TABLES } from '../../client/src/pull/mirror.ts';

export const PULL = fileURLToPath(new URL('../../client/dist/pull/cli.js', import.meta.url));

export interface PullRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs cdapi-pull (the built package) as a child process, without blocking: the service it
 * pulls from may run in this very process. `user`: the uid (and gid) it runs as (root only).
 */
export async function runPull(
  args: string[],
  key: string,
  { user }: { user?: number } = {},
): Promise<PullRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [PULL, ...args], {
      env: { PATH: process.env.PATH ?? '', CDAPI_KEY: key },
      ...(user === undefined ? {} : { uid: user, gid: user }),
      // A run that paces itself to a key's limits waits out a minute; a hung one fails.
      timeout: 300_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * Runs cdapi-pull under a pseudo-terminal (util-linux `script`), so its stderr is a TTY;
 * returns what the terminal showed.
 */
export async function runPullOnTerminal(args: string[], key: string): Promise<string> {
  const command = [process.execPath, PULL, ...args].map((word) => `'${word}'`).join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', CDAPI_KEY: key, TERM: 'xterm' },
  });
  return stdout;
}

/** Starts cdapi-pull and returns the child, for a test that kills it half way. */
export function startPull(args: string[], key: string): ChildProcessByStdio<null, null, Readable> {
  return spawn(process.execPath, [PULL, ...args], {
    env: { PATH: process.env.PATH ?? '', CDAPI_KEY: key },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

export type Row = Record<string, string | number | null>;

/** Every row of each resource table the mirror holds, by id, and the stored state. */
export function readMirror(file: string): {
  tables: Record<string, Row[]>;
  state: Record<string, string>;
} {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const tables: Record<string, Row[]> = {};
    const held = new Set(
      db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
        .all()
        .map((row) => row.name),
    );
    for (const table of Object.values(TABLES))
      if (held.has(table))
        tables[table] = db.prepare(`SELECT * FROM ${table} ORDER BY id`).all() as Row[];
    const state = Object.fromEntries(
      db
        .prepare('SELECT name, value FROM _cdapi_state')
        .all()
        .map((row) => [row.name, row.value]),
    ) as Record<string, string>;
    return { tables, state };
  } finally {
    db.close();
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/**
 * What the service's list operations answer now, each record as a mirror row holds its list
 * fields (nested objects as JSON text, booleans as 0/1); the mirror's rows are cut to the same
 * fields, so the two compare with deepEqual.
 */
export async function listsAndMirror(client: Client, file: string) {
  const lists: Record<string, Array<Record<string, unknown>>> = {
    employees: await collect(client.employees.all()),
    leave_types: await client.leaveTypes(),
    leaves: await collect(client.leaves.all()),
    expense_categories: await client.expenseCategories(),
    expenses: await collect(client.expenses.all()),
  };
  const { tables } = readMirror(file);
  const service: Record<string, Row[]> = {};
  const mirror: Record<string, Row[]> = {};
  for (const [table, items] of Object.entries(lists)) {
    service[table] = items.map((item) =>
      Object.fromEntries(Object.entries(item).map(([field, value]) => [field, cellOf(value)])),
    );
    const fields = Object.keys(items[0] ?? { id: 0 });
    mirror[table] = (tables[table] ?? []).map((row) =>
      Object.fromEntries(fields.map((field) => [field, row[field] ?? null])),
    );
  }
  return { service, mirror };
}

export const clientOf = (baseUrl: string, apiKey: string) => createClient({ baseUrl, apiKey });
