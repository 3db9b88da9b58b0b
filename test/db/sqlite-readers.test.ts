import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { SqliteReaders } from '../../src/db/sqlite-readers.ts';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';
import { useTempDir } from '../helpers/databases.ts';

/**
 * A WAL file with a table of 10 rows, its writer connection, and two reader threads over it
 * (`nice` steps below the event loop).
 */
async function useReaders(t: TestContext, nice = 0) {
  const path = join(useTempDir(t), 'readers.db');
  const writer = new SqliteDatabase(path);
  writer.pragma('journal_mode = WAL');
  writer.exec('create table t (id integer primary key, v text)');
  const insert = writer.prepare('insert into t (id, v) values (?, ?)');
  for (let i = 1; i <= 10; i++) insert.run(i, `v${i}`);
  const readers = new SqliteReaders({ path, threads: 2, busyTimeoutMs: 1000, nice });
  t.after(async () => {
    await readers.stop();
    writer.close();
  });
  await readers.ready();
  return { writer, readers };
}

/** The reader threads as they are now (a stopped one is replaced in the list). */
const threadsOf = (readers: SqliteReaders) =>
  (readers as unknown as { threads: Array<{ worker: Worker; ready: Promise<void> }> }).threads;

describe('SQLite reader threads', () => {
  it('run nice steps below the event loop on Linux, the event loop and the rest left as they are', async (t) => {
    if (process.platform !== 'linux') {
      t.skip('per-thread nice values are Linux’s (elsewhere the threads keep the process’s)');
      return;
    }
    /** Each thread of this process, by its id, and its nice value. */
    const niceOfThreads = () =>
      new Map(
        readdirSync('/proc/self/task').map((task) => {
          const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
          // Field 19 of stat(5); the fields after the command's closing parenthesis start at 3.
          return [task, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
        }),
      );
    const before = niceOfThreads();
    // Raised from the process's own, at most to 19 (a test run under `nice -n 18` sees 19).
    const expected = Math.min(19, (before.get(String(process.pid)) as number) + 3);
    const { readers } = await useReaders(t, 3);
    // A query answered by each thread: both have opened the file and set their nice value.
    await Promise.all([readers.query('select 1 as n', []), readers.query('select 2 as n', [])]);
    const after = niceOfThreads();
    const started = [...after].filter(([task]) => !before.has(task));
    assert.equal(started.filter(([, nice]) => nice === expected).length, 2);
    for (const [task, nice] of before) {
      if (after.has(task)) assert.equal(after.get(task), nice, `thread ${task} keeps its own`);
    }
  });

  it('answer queries with their rows, and errors with SQLite’s code', async (t) => {
    const { readers } = await useReaders(t);
    assert.deepEqual(await readers.query('select id, v from t where id <= ? order by id', [2]), [
      { id: 1, v: 'v1' },
      { id: 2, v: 'v2' },
    ]);
    await assert.rejects(readers.query('select nope from t', []), { code: 'SQLITE_ERROR' });
  });

  it('keep SQLite’s own 2 MB page cache each, not the driver’s 16 MB', async (t) => {
    const { writer, readers } = await useReaders(t);
    assert.deepEqual(writer.pragma('cache_size'), [{ cache_size: -16000 }], 'the driver’s');
    const sizes = await Promise.all([
      readers.query('pragma cache_size', []),
      readers.query('pragma cache_size', []),
    ]);
    assert.deepEqual(sizes, [[{ cache_size: -2000 }], [{ cache_size: -2000 }]]);
  });

  it('only read, and see what the writer commits', async (t) => {
    const { writer, readers } = await useReaders(t);
    await assert.rejects(readers.query('delete from t', []), { code: 'SQLITE_READONLY' });
    writer.prepare('insert into t (id, v) values (11, ?)').run('v11');
    assert.deepEqual(await readers.query('select count(*) as n from t', []), [{ n: 11 }]);
  });

  it('run a chain: each run takes the previous row’s values', async (t) => {
    const { readers } = await useReaders(t);
    // Every third row after the previous one: 3, 6, 9, then nothing.
    const rows = await readers.query(
      'select id from t where id > ? order by id limit 1 offset 2',
      [0],
      {
        positions: [0],
        count: 10,
      },
    );
    assert.deepEqual(rows, [{ id: 3 }, { id: 6 }, { id: 9 }]);
  });

  it('answer quick queries on the free thread while a slow one holds the other', async (t) => {
    const { readers } = await useReaders(t);
    const finished: string[] = [];
    const slow = readers
      .query(
        'with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000000) select count(*) as n from n',
        [],
      )
      .then(() => finished.push('slow'));
    const quick = Array.from({ length: 6 }, (_, i) =>
      readers
        .query('select v from t where id = ?', [i + 1])
        .then((rows) => finished.push(String((rows[0] as { v: string }).v))),
    );
    await Promise.all([slow, ...quick]);
    assert.deepEqual(finished, ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'slow']);
  });

  it('stop when they cannot open the file, and make no empty database in its place', async (t) => {
    const path = join(useTempDir(t), 'moved-away.db');
    const readers = new SqliteReaders({ path, threads: 2, busyTimeoutMs: 1000, nice: 0 });
    t.after(() => readers.stop());
    await assert.rejects(readers.ready(), /unable to open database file/);
    assert.equal(existsSync(path), false);
    const error = await readers.query('select 1', []).then(
      () => null,
      (reason: unknown) => reason,
    );
    assert.ok(isDatabaseUnavailable(error), String(error));
    // Stopped: no thread is started again after the pause a failed start waits.
    const threads = [...threadsOf(readers)];
    await sleep(1200);
    assert.deepEqual(threadsOf(readers), threads);
  });

  it('stop threads still starting without aborting the process', async (t) => {
    // A thread terminated while it loads better-sqlite3 aborted the process (node-addon-api's
    // fatal error): the first thread to fail its start stopped the other mid-start, and a stop
    // right after the threads were made caught them loading. Each round is a chance to hit it.
    const dir = useTempDir(t);
    const path = join(dir, 'starting.db');
    new SqliteDatabase(path).close();
    for (let round = 0; round < 40; round++) {
      const missing = new SqliteReaders({
        path: join(dir, 'missing.db'),
        threads: 2,
        busyTimeoutMs: 1000,
        nice: 0,
      });
      await assert.rejects(missing.ready(), /unable to open database file/);
      const starting = new SqliteReaders({ path, threads: 2, busyTimeoutMs: 1000, nice: 0 });
      await sleep(round % 10);
      await starting.stop();
    }
  });

  it('start a thread that could not open the file again after a pause, not in a loop', async (t) => {
    const { readers } = await useReaders(t);
    const path = (readers as unknown as { options: { path: string } }).options.path;
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    const crashed = threadsOf(readers)[0] as { worker: Worker };
    await crashed.worker.terminate();
    // Replaced at once (it had opened the file), by a thread that cannot open it.
    const failed = threadsOf(readers)[0] as { ready: Promise<void> };
    assert.notEqual(failed, crashed);
    await assert.rejects(failed.ready);
    await sleep(300);
    assert.equal(threadsOf(readers)[0], failed, 'not started again at once');
    assert.equal(existsSync(path), false);
    await sleep(1000);
    assert.notEqual(threadsOf(readers)[0], failed, 'started again after the pause');
  });

  it('replace a thread that stops; its queries fail as an unavailable database', async (t) => {
    const { readers } = await useReaders(t);
    const first = threadsOf(readers)[0] as { worker: Worker };
    // A query that keeps its thread busy while the thread is stopped under it.
    const busy = readers.query(
      'with recursive n(i) as (select 1 union all select i + 1 from n where i < 30000000) select count(*) from n',
      [],
    );
    await first.worker.terminate();
    const error = await busy.then(
      () => null,
      (reason: unknown) => reason,
    );
    assert.ok(isDatabaseUnavailable(error), String(error));
    assert.notEqual(threadsOf(readers)[0], first, 'the stopped thread was replaced');
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(await readers.query('select count(*) as n from t', []), [{ n: 10 }]);
    }
  });
});
