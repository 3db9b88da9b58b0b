import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { BIN, cdapi, cdapiJson } from '../helpers/cli.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import {
  category,
  company,
  employee,
  expense,
  smallCompany,
  writeJpeg,
  writeNdjson,
} from '../helpers/records.ts';
import { listFiles, snapshotDatabase } from '../helpers/snapshot.ts';

/** One company with `count` employees: about 420 bytes each, so 600 make four 64 KiB chunks. */
function companyWithEmployees(count: number) {
  return [company(1), ...Array.from({ length: count }, (_, i) => employee(1, i + 1))];
}

const PLAIN_LINE =
  /^cdapi import: \d+% of \d+(\.\d)? MB, [\d,]+ records?, [\d,]+ records\/s, (ETA (\?|\d+:\d\d)|read in \d+:\d\d, committing…|done in \d+:\d\d)$/;
/** A step after the last record, said as it starts. */
const STEP_LINE = /^cdapi import: (?<step>[^,]+), \d+:\d\d elapsed$/;

/**
 * The steps of a first load of employees (`roster`) into an empty SQLite database, as the
 * progress says them: the leaves and expenses it leaves empty have no steps of their own.
 */
const FIRST_LOAD_STEPS = [
  'building the search index of employees',
  'building the indexes of employees',
  'recording the change feed',
  'counting for totals and searches',
  'committing',
  'sampling the long lists',
  "refreshing the query planner's statistics",
];

async function sqliteSetup(t: TestContext) {
  const dir = useTempDir(t);
  const env = { DATABASE_URL: `sqlite:${join(dir, 'import.db')}` };
  return { dir, env };
}

describe('cdapi import progress', () => {
  it('redraws one line on a terminal: bar, percent, ETA, records and rate', async (t) => {
    const { dir, env } = await sqliteSetup(t);
    const file = writeNdjson(dir, companyWithEmployees(600));
    const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
    // util-linux `script` runs the command on a pseudo-terminal and copies what it shows.
    const shown = spawnSync(
      'script',
      [
        '-q',
        '-e',
        '-c',
        // A terminal 120 columns wide (a narrower one cuts the line's end).
        `stty cols 120 && ${[process.execPath, BIN, 'import', file].map(quote).join(' ')}`,
        '/dev/null',
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(shown.status, 0, shown.stdout);
    // The terminal turns each \n into \r\n; the frames are joined by \r alone.
    const [frames = '', ...rest] = shown.stdout.split('\r\n');
    assert.deepEqual(rest, [
      'Imported 601 records (1 company, 600 employees); 0 receipt files.',
      '',
    ]);
    const drawn = frames.split('\r').filter(Boolean);
    assert.ok(drawn.length >= 3, `at least the first, a step and the last frame: ${drawn.length}`);
    // Each frame ends by clearing the rest of the line (ESC [K).
    const CLEAR = '\u001b[K';
    const steps: string[] = [];
    for (const frame of drawn) {
      assert.ok(frame.endsWith(CLEAR), JSON.stringify(frame));
      const { groups } =
        frame
          .slice(0, -CLEAR.length)
          .match(
            /^import \[[#.]{16}\] +\d+% {2}(ETA \S+|read in \S+, committing…|(?<step>[^…]+)… \d+:\d\d|done in \d+:\d\d) {2}[\d,]+ records? {2}[\d,]+ records\/s$/,
          ) ?? assert.fail(JSON.stringify(frame));
      if (groups?.step && steps.at(-1) !== groups.step) steps.push(groups.step);
    }
    assert.deepEqual(steps, FIRST_LOAD_STEPS);
    assert.match(drawn.at(-1) ?? '', /^import \[#{16}\] 100% {2}done in \d+:\d\d {2}601 records/);
  });

  it('prints plain lines when stderr is not a terminal, JSON lines with --json, none with --no-progress', async (t) => {
    const { dir, env } = await sqliteSetup(t);
    const file = writeNdjson(dir, companyWithEmployees(600));
    const plain = cdapi(['import', file, '--progress-every', '0'], env);
    assert.equal(plain.status, 0, plain.stderr);
    const lines = plain.stderr.trimEnd().split('\n');
    const read = lines.filter((line) => PLAIN_LINE.test(line));
    assert.ok(read.length >= 5, `one line a 64 KiB chunk, and the last: ${read.length}`);
    assert.match(read.at(-2) ?? '', /^cdapi import: 100% of 0\.\d MB, 601 records, .*committing…$/);
    assert.match(
      read.at(-1) ?? '',
      /^cdapi import: 100% of 0\.\d MB, 601 records, .*done in 0:0\d$/,
    );
    assert.equal(lines.at(-1), read.at(-1));
    // Between the end of reading and the end, each step once as it starts.
    const between = lines.slice(lines.indexOf(read.at(-2) ?? ''), -1).slice(1);
    assert.deepEqual(
      between.map((line) => line.match(STEP_LINE)?.groups?.step ?? line),
      FIRST_LOAD_STEPS,
    );
    assert.ok(!plain.stderr.includes('\r') && !plain.stderr.includes('\u001b'));

    // By default a line every 10 s, the first after 10 s: a quick import prints only its result.
    // Nothing else either: V8 took the flags the CLI gives it (src/heap.ts), as it reports an
    // unknown one on stderr.
    const quick = cdapi(['import', file], env);
    assert.equal(quick.status, 0);
    assert.equal(quick.stderr, '');

    const json = cdapi(['import', file, '--json', '--progress-every', '0'], env);
    assert.equal(json.status, 0, json.stderr);
    const progress = json.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).progress);
    const last = progress.at(-1);
    assert.deepEqual(last, {
      file,
      records: 601,
      bytes_read: last.total_bytes,
      total_bytes: last.total_bytes,
      percent: 100,
      records_per_second: last.records_per_second,
      eta_seconds: 0,
      elapsed_seconds: last.elapsed_seconds,
      stage: 'done',
    });
    assert.ok(last.elapsed_seconds > 0 && last.records_per_second > 0);
    assert.ok(progress.every((p) => p.stage !== 'reading' || p.bytes_read < p.total_bytes));
    // The third import into this database: the employees are in, so their indexes stay, and
    // the leaves and expenses it leaves empty have no steps.
    assert.deepEqual(
      progress.filter((p) => p.step).map(({ step, table }) => (table ? { step, table } : { step })),
      [
        { step: 'feed' },
        { step: 'summaries' },
        { step: 'commit' },
        { step: 'samples' },
        { step: 'statistics' },
      ],
    );
    assert.ok(progress.filter((p) => p.step).every((p) => p.stage === 'committing'));
    assert.equal(JSON.parse(json.stdout).records, 601);

    const silent = cdapi(['import', file, '--no-progress'], env);
    assert.equal(silent.status, 0);
    assert.equal(silent.stderr, '');
  });

  it('keeps a scratch SQLite database’s receipts beside it, never in ./data/receipts', async (t) => {
    const dir = useTempDir(t);
    const cwd = useTempDir(t);
    await writeJpeg(dir, 'slip.jpg');
    const file = writeNdjson(dir, [
      ...smallCompany(1, 0).slice(0, 5),
      expense(1, 1, 1, 1, { receipt: { original: 'slip.jpg' } }),
    ]);
    const result = cdapi(
      ['import', file],
      { DATABASE_URL: `sqlite:${join(dir, 'scratch.db')}` },
      { cwd },
    );
    assert.equal(result.status, 0, result.stderr);
    assert.equal(
      listFiles(join(dir, 'scratch-receipts')).length,
      2,
      'the original and the processed variant',
    );
    assert.ok(!existsSync(join(cwd, 'data')), 'nothing under the working directory’s ./data');
  });

  it('waits for another writer of the SQLite file, and says so when it holds on past the busy timeout', async (t) => {
    const dir = useTempDir(t);
    const path = join(dir, 'a.db');
    const env = { DATABASE_URL: `sqlite:${path}` };
    assert.equal(cdapi(['migrate'], env).status, 0);
    const other = new Database(path);
    t.after(() => other.close());
    // Another import holds SQLite's one write lock for a second: this one waits, then runs.
    other.exec('begin immediate');
    const released = setTimeout(() => other.exec('rollback'), 1000);
    const waited = await promisify(execFile)(
      process.execPath,
      [BIN, 'import', writeNdjson(dir, smallCompany(1, 0)), '--no-progress'],
      { env: { PATH: process.env.PATH ?? '', ...env } },
    );
    clearTimeout(released);
    assert.match(waited.stdout, /^Imported 6 records/);
    // Held past the busy timeout (5 s): a reason, and nothing written.
    other.exec('begin immediate');
    const refused = cdapi(['import', writeNdjson(dir, smallCompany(2, 10), 'two.ndjson')], env);
    other.exec('rollback');
    assert.equal(refused.status, 1);
    assert.equal(
      refused.stderr.trimEnd().split('\n').at(-1),
      'cdapi: another import or command is writing to this SQLite database, which takes one writer at a time: run this import again when it has finished',
    );
    assert.deepEqual(
      cdapiJson<Array<{ id: number }>>(['companies', 'list'], env).map((c) => c.id),
      [1],
    );
  });

  it('fails at once, and commits nothing, when the receipt store cannot be made (under /proc)', {
    skip: process.platform !== 'linux' && 'no /proc on this system',
  }, async (t) => {
    // Node's own recursive mkdir spins at a full core on such a path and never returns.
    const dir = useTempDir(t);
    await writeJpeg(dir, 'slip.jpg');
    const file = writeNdjson(dir, [
      ...smallCompany(1, 0).slice(0, 5),
      expense(1, 1, 1, 1, { receipt: { original: 'slip.jpg' } }),
    ]);
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'a.db')}`,
      RECEIPTS_DIR: '/proc/cdapi-test/receipts',
    };
    const result = cdapi(['import', file, '--no-progress'], env);
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      "cdapi: configuration: RECEIPTS_DIR: cannot store receipts in /proc/cdapi-test/receipts: ENOENT: no such file or directory, mkdir '/proc/cdapi-test'\n",
    );
    const json = cdapi(['import', file, '--no-progress', '--json'], env);
    assert.equal(JSON.parse(json.stderr).variable, 'RECEIPTS_DIR');
    assert.deepEqual(cdapiJson(['companies', 'list'], env), []);
  });

  it('fails naming RECEIPTS_DIR, and commits nothing, when it is a file', async (t) => {
    const dir = useTempDir(t);
    await writeJpeg(dir, 'slip.jpg');
    const file = writeNdjson(dir, [
      ...smallCompany(1, 0).slice(0, 5),
      expense(1, 1, 1, 1, { receipt: { original: 'slip.jpg' } }),
    ]);
    const receipts = join(dir, 'receipts');
    writeFileSync(receipts, 'not a folder');
    const env = { DATABASE_URL: `sqlite:${join(dir, 'a.db')}`, RECEIPTS_DIR: receipts };
    const result = cdapi(['import', file, '--no-progress'], env);
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /^cdapi: configuration: RECEIPTS_DIR: cannot (read|store) receipts in .*\/receipts: ENOTDIR: not a directory/,
    );
    assert.deepEqual(cdapiJson(['companies', 'list'], env), []);
  });
});

describeEachDialect('cdapi import', (dialect) => {
  async function setup(t: TestContext) {
    const database = await useDatabase(t, dialect);
    const dir = useTempDir(t);
    return {
      ...database,
      dir,
      env: { DATABASE_URL: database.url, RECEIPTS_DIR: join(dir, 'receipts') },
    };
  }

  it('--json reports a bad record as JSON naming its line and field', async (t) => {
    const { env, dir } = await setup(t);
    const file = writeNdjson(dir, [company(1), { ...employee(1, 2), email: undefined }]);
    const result = cdapi(['import', file, '--json', '--no-progress'], env);
    assert.equal(result.status, 1);
    assert.equal(result.stdout, '');
    assert.deepEqual(JSON.parse(result.stderr), {
      error: 'line 2: email: is required',
      line: 2,
      field: 'email',
    });
    const withProgress = cdapi(['import', file, '--json'], env);
    assert.deepEqual(JSON.parse(withProgress.stderr.trimEnd().split('\n').at(-1) ?? ''), {
      error: 'line 2: email: is required',
      line: 2,
      field: 'email',
    });
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`rolls back on ${signal} before the commit, its receipt files removed, and exits ${code}`, async (t) => {
      const { env, dir, handle } = await setup(t);
      await writeJpeg(dir, 'a.jpg', 40, 30);
      const base = smallCompany(1, 0).slice(0, 2);
      cdapiJson(['import', writeNdjson(dir, [...base, category(1, 1)], 'base.ndjson')], env);
      const before = await snapshotDatabase(handle.db);
      // The receipt first, then about 10 MB of expenses: read for a second or more.
      const file = writeNdjson(dir, [
        expense(1, 1, 1, 1, { receipt: { original: 'a.jpg' } }),
        ...Array.from({ length: 15_000 }, (_, i) => expense(1, i + 2, 1, 1)),
      ]);
      const child = spawn(
        process.execPath,
        [BIN, 'import', file, '--json', '--progress-every', '0'],
        {
          env: { PATH: process.env.PATH ?? '', ...env },
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        // Sent once the first chunk is read: its receipt is in the store by then.
        if (stderr === '' && text.includes('"progress"')) child.kill(signal);
        stderr += text;
      });
      const [status] = (await once(child, 'close')) as [number | null];
      assert.equal(status, code, stderr);
      assert.deepEqual(JSON.parse(stderr.trimEnd().split('\n').at(-1) ?? ''), {
        error: `interrupted by ${signal}: nothing was imported, and the receipt files it had added are removed`,
      });
      assert.deepEqual(await snapshotDatabase(handle.db), before);
      assert.deepEqual(listFiles(env.RECEIPTS_DIR), []);
    });
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`completes an import that ${signal} reaches while it commits, says so and exits 0`, async (t) => {
      const { env, dir, handle } = await setup(t);
      const file = writeNdjson(dir, [
        ...smallCompany(1, 0).slice(0, 5),
        ...Array.from({ length: 15_000 }, (_, i) => expense(1, i + 1, 1, 1)),
      ]);
      const child = spawn(process.execPath, [BIN, 'import', file, '--progress-every', '0'], {
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      let stderr = '';
      let stdout = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text: string) => {
        stdout += text;
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        // The steps after this one run without waiting on the event loop.
        if (!stderr.includes('committing,') && text.includes('committing,')) child.kill(signal);
        stderr += text;
      });
      const [status] = (await once(child, 'close')) as [number | null];
      assert.equal(status, 0, stderr);
      assert.match(
        stderr,
        new RegExp(`^cdapi: ${signal} came while the import was committing: it is complete$`, 'm'),
      );
      assert.match(stdout, /^Imported 15,005 records /);
      const { expenses } = await handle.db
        .selectFrom('expenses')
        .select((eb) => eb.fn.countAll<number>().as('expenses'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(expenses), 15_000);
    });
  }

  it('counts every run, by outcome, for the service’s metrics', async (t) => {
    const { env, dir, handle } = await setup(t);
    const started = Date.now();
    cdapiJson(['import', writeNdjson(dir, smallCompany(1, 0))], env);
    cdapi(
      ['import', writeNdjson(dir, [company(2), employee(2, 9, { email: 'x' })], 'bad.ndjson')],
      env,
    );
    cdapi(['import', join(dir, 'absent.ndjson')], env);
    // An export that arrived empty is no import: the "no import" alert must still fire.
    assert.equal(cdapi(['import', writeNdjson(dir, [], 'empty.ndjson')], env).status, 0);
    const rows = await handle.db
      .selectFrom('import_stats')
      .selectAll()
      .orderBy('outcome', 'desc')
      .execute();
    assert.deepEqual(
      rows.map(({ outcome, runs, records }) => ({ outcome, runs, records })),
      [
        { outcome: 'succeeded', runs: 1, records: 6 },
        { outcome: 'failed', runs: 2, records: 0 },
        { outcome: 'empty', runs: 1, records: 0 },
      ],
    );
    for (const row of rows) {
      assert.ok(
        row.duration_ms >= (row.last_duration_ms ?? -1) && (row.last_duration_ms ?? -1) >= 0,
      );
      assert.ok(
        (row.last_finished_ms ?? 0) >= started && (row.last_finished_ms ?? 0) <= Date.now(),
      );
    }
  });

  if (dialect === 'postgres') {
    it('needs RECEIPTS_DIR to import into PostgreSQL, and only where receipts are handled', async (t) => {
      const { url, dir } = await setup(t);
      const file = writeNdjson(dir, smallCompany(1, 0));
      const result = cdapi(['import', file], { DATABASE_URL: url });
      assert.equal(result.status, 1);
      assert.equal(
        result.stderr,
        'cdapi: configuration: RECEIPTS_DIR: is required when DATABASE_URL is PostgreSQL (the receipt store every instance and cdapi import share)\n',
      );
      assert.deepEqual(cdapiJson(['companies', 'list'], { DATABASE_URL: url }), []);
    });
  }
});
