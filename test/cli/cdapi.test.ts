import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { migrationProvider } from '../../src/db/migrate.ts';
import { isWellFormedApiKey } from '../../src/keys/api-key.ts';
import { BIN, cdapi, cdapiAsync, cdapiJson, runWithOutputClosed } from '../helpers/cli.ts';
import { describeEachDialect, useDatabase, useTempDir } from '../helpers/databases.ts';
import { company, employee, smallCompany, writeNdjson } from '../helpers/records.ts';
import { listFiles, snapshotDatabase } from '../helpers/snapshot.ts';

const MIGRATIONS = Object.keys(await migrationProvider.getMigrations());

describeEachDialect('cdapi CLI', (dialect) => {
  async function setup(t: TestContext, options: { migrate?: boolean } = { migrate: true }) {
    const database = await useDatabase(t, dialect, options);
    const dir = useTempDir(t);
    const env = { DATABASE_URL: database.url, RECEIPTS_DIR: join(dir, 'receipts') };
    return { ...database, dir, env };
  }

  // Help and the compile cache read no database: checked once.
  if (dialect === 'sqlite') {
    it('prints help for every command and exits 0', async (t) => {
      const { env } = await setup(t);
      const help = cdapi(['--help'], env);
      assert.equal(help.status, 0);
      for (const command of ['migrate', 'import', 'demo', 'companies', 'keys']) {
        assert.match(help.stdout, new RegExp(`\\n  ${command}\\b`));
      }
      const commands = [
        ['serve'],
        ['migrate'],
        ['import'],
        ['demo'],
        ['companies'],
        ...['list', 'activate', 'deactivate', 'purge'].map((name) => ['companies', name]),
        ['keys'],
        ...['create', 'list', 'revoke'].map((name) => ['keys', name]),
      ];
      for (const command of commands) {
        const { status, stdout } = cdapi([...command, '--help'], env);
        assert.equal(status, 0, command.join(' '));
        // Examples of the command itself, and the variables it reads.
        assert.match(
          stdout,
          new RegExp(`\nExamples:\n(  .*\n)*  npx cdapi ${command.join(' ')}\\b`),
        );
        assert.match(stdout, /\nEnvironment\b.*:\n {2}DATABASE_URL\n/);
      }
    });

    it('keeps Node’s compile cache in the temporary folder', async (t) => {
      const { env, dir } = await setup(t);
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp);
      assert.equal(cdapi(['--help'], { ...env, TMPDIR: tmp }).status, 0);
      assert.notDeepEqual(listFiles(join(tmp, 'node-compile-cache')), []);
      const disabled = join(dir, 'disabled');
      mkdirSync(disabled);
      cdapi(['--help'], { ...env, TMPDIR: disabled, NODE_DISABLE_COMPILE_CACHE: '1' });
      assert.deepEqual(readdirSync(disabled), []);
    });
  }

  it('runs to its end when its output is piped to a reader that has gone (| head)', async (t) => {
    const { env, dir } = await setup(t);
    const file = writeNdjson(dir, smallCompany(1, 0));
    const closedOutput = (args: string[]) => runWithOutputClosed(BIN, args, env);
    for (const args of [['--help'], ['import', file], ['companies', 'list', '--json']]) {
      assert.deepEqual(await closedOutput(args), { status: 0, stderr: '' }, args.join(' '));
    }
    // The import committed though its summary went nowhere.
    const listed = cdapiJson<{ id: number }[]>(['companies', 'list'], env);
    assert.deepEqual(
      listed.map((row) => row.id),
      [1],
    );
    // A failure still says why on stderr and exits non-zero.
    const failed = await closedOutput(['import', join(dir, 'missing.ndjson')]);
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /^cdapi: .*missing\.ndjson/);
  });

  it('migrate applies the schema once and is idempotent', async (t) => {
    const { env } = await setup(t, { migrate: false });
    assert.deepEqual(cdapiJson(['migrate'], env), { applied: MIGRATIONS });
    const again = cdapi(['migrate'], env);
    assert.equal(again.status, 0);
    assert.equal(again.stdout, 'Database is up to date.\n');
  });

  it('import loads a file and reports what it loaded', async (t) => {
    const { env, dir } = await setup(t);
    const file = writeNdjson(dir, [...smallCompany(1, 0), ...smallCompany(2, 100)]);
    const summary = cdapiJson<{ records: number; counts: Record<string, number> }>(
      ['import', file],
      env,
    );
    assert.equal(summary.records, 12);
    assert.equal(summary.counts.leave, 2);
    const human = cdapi(['import', file], env);
    assert.equal(human.status, 0);
    assert.equal(
      human.stdout,
      'Imported 12 records (2 companies, 2 employees, 2 leave types, 2 leaves, 2 expense categories, 2 expenses); 0 receipt files.\n',
    );
  });

  it('import tells deleted records from delete lines of ids the company did not have', async (t) => {
    const { env, dir } = await setup(t);
    cdapi(['import', writeNdjson(dir, [...smallCompany(1, 0), employee(1, 2)])], env);
    const del = (resource: string, id: number) => ({
      type: 'delete',
      resource,
      company_id: 1,
      id,
    });
    const file = writeNdjson(
      dir,
      // The second line deleting employee 2 finds it gone.
      [
        del('employee', 2),
        del('employee', 7),
        del('employee', 2),
        del('leave', 8),
        del('leave', 9),
      ],
      'deletes.ndjson',
    );
    const human = cdapi(['import', file], env);
    assert.equal(human.status, 0, human.stderr);
    assert.equal(
      human.stdout,
      'Imported 5 records (1 employee deleted, 2 employees to delete not found, 2 leaves to delete not found); 0 receipt files.\n',
    );
    // Replayed, every line finds nothing.
    const again = cdapiJson<{ deletes: object; absent_deletes: object; company_ids: number[] }>(
      ['import', file],
      env,
    );
    assert.deepEqual(again.company_ids, [1]);
    const none = {
      company: 0,
      employee: 0,
      leave_type: 0,
      leave: 0,
      expense_category: 0,
      expense: 0,
    };
    assert.deepEqual(again.deletes, { ...none, employee: 3, leave: 2 });
    assert.deepEqual(again.absent_deletes, { ...none, employee: 3, leave: 2 });
  });

  if (dialect === 'sqlite') {
    it('import says when a read held the write-ahead log, so deleted values are still on disk', async (t) => {
      const { env, dir, target } = await setup(t);
      const load = cdapi(
        ['import', writeNdjson(dir, [company(1), employee(1, 2)], 'load.ndjson')],
        env,
      );
      assert.equal(load.status, 0, load.stderr);
      // A read of its own, begun before the deletion and held past the busy timeout.
      const reader = new Database((target as { path: string }).path, { readonly: true });
      t.after(() => reader.close());
      reader.exec('begin');
      reader.prepare('select count(*) from employees').get();
      const deletion = writeNdjson(
        dir,
        [{ type: 'delete', resource: 'employee', company_id: 1, id: 2 }],
        'delete.ndjson',
      );
      const held = cdapi(['import', deletion], { ...env, DATABASE_STATEMENT_TIMEOUT_MS: '200' });
      assert.equal(held.status, 0, held.stderr);
      assert.equal(held.stdout, 'Imported 1 record (1 employee deleted); 0 receipt files.\n');
      assert.match(held.stderr, /old values are still in the database's -wal file/);
      const json = cdapiJson<{ deleted_values_in_wal: boolean }>(['import', deletion], env);
      assert.equal(json.deleted_values_in_wal, false, 'nothing deleted the second time');
    });
  }

  it('import rejects a bad file with one line naming line and field, and changes nothing', async (t) => {
    const { env, dir } = await setup(t);
    const file = writeNdjson(dir, [
      company(1),
      employee(1, 1),
      { ...employee(1, 2), email: undefined },
    ]);
    const result = cdapi(['import', file], env);
    assert.equal(result.status, 1);
    assert.equal(result.stderr, 'cdapi: line 3: email: is required\n');
    assert.equal(result.stdout, '');
    assert.deepEqual(cdapiJson(['companies', 'list'], env), []);
    const missing = cdapi(['import', join(dir, 'absent.ndjson')], env);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^cdapi: cannot read .*absent\.ndjson: no such file\n$/);
    const directory = cdapi(['import', dir], env);
    assert.equal(directory.status, 1);
    assert.equal(
      directory.stderr,
      `cdapi: cannot read ${dir}: a directory, not a file: save the export to a file first\n`,
    );
    const pipe = join(dir, 'export.fifo');
    execFileSync('mkfifo', [pipe]);
    const fromPipe = cdapi(['import', pipe], env);
    assert.equal(fromPipe.status, 1);
    assert.equal(
      fromPipe.stderr,
      `cdapi: cannot read ${pipe}: a pipe, not a file: save the export to a file first\n`,
    );
    const stdin = cdapi(['import', '-'], env, { cwd: dir });
    assert.equal(stdin.status, 1);
    assert.equal(
      stdin.stderr,
      'cdapi: cannot read -: standard input is not read: save the export to a file first\n',
    );
  });

  it('keys create prints the key once; only its digest is stored', async (t) => {
    const { env, dir, handle } = await setup(t);
    cdapi(['import', writeNdjson(dir, smallCompany(1, 0))], env);
    const created = cdapiJson<Record<string, unknown>>(
      ['keys', 'create', '--company', '1', '--name', 'test'],
      env,
    );
    assert.deepEqual(Object.keys(created).sort(), ['company_id', 'id', 'key', 'name', 'scopes']);
    assert.equal(created.company_id, 1);
    assert.equal(created.name, 'test');
    assert.deepEqual(created.scopes, ['leaves.read', 'expenses.read']);
    assert.ok(isWellFormedApiKey(String(created.key)));
    const rows = await handle.db.selectFrom('api_keys').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(String(created.key)), 'the raw key is not stored');
    assert.equal(rows[0]?.per_minute, 120);
    assert.equal(rows[0]?.per_hour, 3000);

    const human = cdapi(
      [
        'keys',
        'create',
        '--company',
        '1',
        '--name',
        'limited',
        '--scopes',
        'leaves.read',
        '--per-minute',
        '5',
        '--per-hour',
        '50',
      ],
      env,
    );
    assert.equal(human.status, 0);
    assert.match(
      human.stdout,
      /^Created key 2 "limited" for company 1 \(scopes: leaves\.read\)\.\nStore it now; it is not shown again:\ncdk_[0-9A-Za-z]{38}\n$/,
    );
    assert.equal(human.stderr, '');
  });

  it('keys create notes a key that cannot work yet, and an hourly limit below the minute’s', async (t) => {
    const { env, dir } = await setup(t);
    cdapi(['import', writeNdjson(dir, smallCompany(1, 0))], env);
    assert.equal(cdapi(['companies', 'deactivate', '1'], env).status, 0);
    const created = cdapi(
      [
        'keys',
        'create',
        '--company',
        '1',
        '--name',
        'early',
        '--per-minute',
        '100',
        '--per-hour',
        '50',
        '--json',
      ],
      env,
    );
    assert.equal(created.status, 0);
    assert.equal(JSON.parse(created.stdout).name, 'early');
    assert.equal(
      created.stderr,
      [
        'cdapi: note: company 1 is inactive: the key is refused (403 company_inactive) until `cdapi companies activate 1`',
        'cdapi: note: --per-hour 50 is below --per-minute 100: no more than 50 requests get through in any minute either',
        '',
      ].join('\n'),
    );
  });

  it('keys list shows the prefix, never the key; keys revoke marks it revoked', async (t) => {
    const { env, dir } = await setup(t);
    cdapi(['import', writeNdjson(dir, smallCompany(1, 0))], env);
    const { id, key } = cdapiJson<{ id: number; key: string }>(
      ['keys', 'create', '--company', '1', '--name', 'ci'],
      env,
    );
    const list = cdapi(['keys', 'list', '--company', '1'], env);
    assert.equal(list.status, 0);
    assert.ok(list.stdout.includes(`${key.slice(0, 12)}…`));
    assert.ok(!list.stdout.includes(key));
    const listed = cdapiJson<Array<Record<string, unknown>>>(
      ['keys', 'list', '--company', '1'],
      env,
    );
    assert.equal(listed[0]?.prefix, key.slice(0, 12));
    assert.equal(listed[0]?.revoked_at, null);
    assert.ok(!JSON.stringify(listed).includes(key));

    const revoked = cdapiJson<{ revoked_at: string }>(['keys', 'revoke', String(id)], env);
    assert.match(revoked.revoked_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const again = cdapiJson<{ revoked_at: string }>(['keys', 'revoke', String(id)], env);
    assert.equal(again.revoked_at, revoked.revoked_at);
  });

  it('companies list, deactivate and activate', async (t) => {
    const { env, dir } = await setup(t);
    cdapi(['import', writeNdjson(dir, smallCompany(1, 0))], env);
    assert.deepEqual(cdapiJson(['companies', 'deactivate', '1'], env), {
      id: 1,
      name: 'Company 1',
      timezone: 'Europe/Istanbul',
      active: false,
    });
    assert.equal(
      cdapi(['companies', 'list'], env).stdout,
      'ID  NAME       TIMEZONE         ACTIVE\n1   Company 1  Europe/Istanbul  no\n',
    );
    assert.equal(
      cdapi(['companies', 'activate', '1'], env).stdout,
      'Company 1 (Company 1) is now active.\n',
    );
  });

  // SQLite's one writer only: registered for it alone, so that no suite reports a skip.
  if (dialect === 'sqlite')
    it('says another command is writing when SQLite stays locked past the busy timeout', async (t) => {
      const { env } = await setup(t);
      assert.equal(cdapi(['import', writeNdjson(useTempDir(t), [company(1)])], env).status, 0);
      const writer = new Database(env.DATABASE_URL.replace(/^sqlite:/, ''));
      writer.exec('BEGIN IMMEDIATE');
      try {
        // After the commands' busy timeout, 5 s.
        const locked = cdapi(['keys', 'create', '--company', '1', '--name', 'x'], env);
        assert.equal(locked.status, 1);
        assert.equal(
          locked.stderr,
          'cdapi: another import or command is writing to this SQLite database, which takes one writer at a time: run this command again when it has finished\n',
        );
      } finally {
        writer.exec('ROLLBACK');
      }
      // A migration to apply, as after an upgrade: the first command migrates, and says which
      // migration waited in vain.
      writer.prepare('DELETE FROM kysely_migration WHERE name = ?').run(MIGRATIONS.at(-1));
      writer.exec('BEGIN IMMEDIATE');
      try {
        const migrate = cdapi(['migrate'], env);
        assert.equal(migrate.status, 1);
        assert.equal(
          migrate.stderr,
          `cdapi: migration ${MIGRATIONS.at(-1)} failed: another import or command is writing to this SQLite database, which takes one writer at a time: run this command again when it has finished\n`,
        );
      } finally {
        writer.exec('ROLLBACK');
        writer.close();
      }
    });

  it('fails with a one-line reason and a non-zero code when a record is not found', async (t) => {
    const { env } = await setup(t);
    for (const [args, stderr] of [
      [['keys', 'create', '--company', '9', '--name', 'x'], /^cdapi: company 9 not found\n$/],
      [['keys', 'revoke', '99'], /^cdapi: key 99 not found\n$/],
      [['companies', 'deactivate', '99'], /^cdapi: company 99 not found\n$/],
    ] as const) {
      const result = cdapi([...args], env);
      assert.equal(result.status, 1, args.join(' '));
      assert.match(result.stderr, stderr, args.join(' '));
    }
  });

  // Arguments and configuration are refused before any database is read: checked once.
  if (dialect === 'sqlite')
    it('fails with a one-line reason and a non-zero code', async (t) => {
      const { env, dir } = await setup(t);
      const cases: Array<[string[], RegExp]> = [
        [
          ['keys', 'create', '--company', 'abc', '--name', 'x'],
          /^cdapi: option '--company <id>' argument 'abc' is invalid\. --company must be a positive integer of at most 9007199254740991 \(2\^53 − 1\), in plain digits\.\n$/,
        ],
        [
          ['companies', 'activate', '9007199254740992'],
          /^cdapi: command-argument value '9007199254740992' is invalid for argument 'id'\. company id must be a positive integer of at most 9007199254740991 \(2\^53 − 1\), in plain digits\.\n$/,
        ],
        [
          ['keys', 'create', '--company', '1', '--name', 'x', '--scopes', 'salaries.read'],
          /unknown scope "salaries\.read"/,
        ],
        [
          ['keys', 'create', '--company', '1'],
          /^cdapi: required option '--name <label>' not specified\n$/,
        ],
        // The label quoted with its control characters escaped: one line, no terminal codes.
        ...(
          [
            ['a\nb', 'a\\nb'],
            ['tab\there', 'tab\\there'],
            ['\u001b[31mred', '\\u001b[31mred'],
            [' ', ' '],
            ['x'.repeat(101), 'x'.repeat(101)],
          ] as [string, string][]
        ).map(([name, shown]): [string[], RegExp] => [
          ['keys', 'create', '--company', '1', '--name', name],
          new RegExp(
            `^cdapi: option '--name <label>' argument '${shown.replace(/[\\[\]]/g, '\\$&')}' is invalid\\. must be 1 to 100 characters, not blank, without control characters \\(line breaks, tabs\\) or lone surrogates \\(\\\\ud800\\)\\.\\n$`,
          ),
        ]),
        // Escaped wherever a reason quotes them: after an apostrophe, in the project's own words.
        [
          ['keys', 'create', '--company', "it's\u001b[31mRED\r", '--name', 'x'],
          /^cdapi: option '--company <id>' argument 'it's\\u001b\[31mRED\\r' is invalid\. [^\p{Cc}]*\n$/u,
        ],
        [
          [
            'keys',
            'create',
            '--company',
            '1',
            '--name',
            'x',
            '--scopes',
            '\u001b[31mX\u0085\u202e',
          ],
          /unknown scope "\\u001b\[31mX\\u0085\\u202e"[^\p{Cc}\u202e]*\n$/u,
        ],
        [['import'], /^cdapi: missing required argument 'file'\n$/],
        [['frobnicate'], /^cdapi: unknown command 'frobnicate'\n$/],
        [['imprt', 'x.ndjson'], /^cdapi: unknown command 'imprt' \(Did you mean import\?\)\n$/],
        [
          ['serve', '--port', '80000'],
          /^cdapi: option '--port <port>' argument '80000' is invalid/,
        ],
        [['serve', '--verbose'], /^cdapi: unknown option '--verbose'\n$/],
        // Every number in digits without leading zeros, as ids and the environment's are.
        [
          ['keys', 'create', '--company', '1', '--name', 'x', '--per-minute', '010'],
          /^cdapi: option '--per-minute <n>' argument '010' is invalid\. must be a whole number from 1 to \d+, in plain digits\.\n$/,
        ],
        [['demo', '--employees', '010'], /argument '010' is invalid\. must be a whole number/],
        [['serve', '--port', '08080'], /argument '08080' is invalid\. must be a whole number/],
        [
          ['import', 'x.ndjson', '--progress-every', '05'],
          /argument '05' is invalid\. must be a number of seconds from 0 to 86400, in plain digits\.\n$/,
        ],
        [
          ['import', 'x.ndjson', '--progress-every', 'often'],
          /^cdapi: option '--progress-every <seconds>' argument 'often' is invalid/,
        ],
      ];
      for (const [args, stderr] of cases) {
        const result = cdapi(args, env);
        assert.notEqual(result.status, 0, args.join(' '));
        assert.match(result.stderr, stderr, args.join(' '));
      }
      const badConfig = cdapi(['companies', 'list'], { DATABASE_URL: 'mysql://localhost/x' });
      assert.equal(badConfig.status, 1);
      assert.equal(
        badConfig.stderr,
        'cdapi: configuration: DATABASE_URL: must start with sqlite:, postgres:// or postgresql://\n',
      );
      // A PostgreSQL that takes the connection and never answers: told, not waited for.
      const silent = createServer(() => {}).listen(0, '127.0.0.1');
      await once(silent, 'listening');
      t.after(() => silent.close());
      const { port } = silent.address() as AddressInfo;
      const frozen = cdapi(['keys', 'list', '--company', '1'], {
        DATABASE_URL: `postgres://u@127.0.0.1:${port}/db`,
        DATABASE_STATEMENT_TIMEOUT_MS: '500',
      });
      assert.equal(frozen.status, 1);
      assert.match(
        frozen.stderr,
        /^cdapi: cannot connect to the database: it did not answer within DATABASE_STATEMENT_TIMEOUT_MS \(.+\)\n$/,
      );
      // One that completes the handshake and then never answers a query: a quick command is
      // told too (its statements are bounded; an import's or a migration's are not).
      const mute = createServer((socket) => {
        socket.once('data', () => {
          // AuthenticationOk, then ReadyForQuery (idle); whatever comes next is never answered.
          socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]));
        });
      }).listen(0, '127.0.0.1');
      await once(mute, 'listening');
      t.after(() => mute.close());
      for (const args of [
        ['keys', 'list', '--company', '1'],
        ['keys', 'revoke', '1'],
        ['companies', 'deactivate', '1'],
      ]) {
        const muted = await cdapiAsync(args, {
          DATABASE_URL: `postgres://u@127.0.0.1:${(mute.address() as AddressInfo).port}/db`,
          DATABASE_STATEMENT_TIMEOUT_MS: '500',
        });
        assert.equal(muted.status, 1, args.join(' '));
        assert.match(muted.stderr, /^cdapi: .*DATABASE_STATEMENT_TIMEOUT_MS.*\n$/, args.join(' '));
      }
      // A path that cannot hold the database: the message names the variable and the path.
      const notes = join(dir, 'notes.txt');
      writeFileSync(notes, 'not a database\n');
      for (const [path, reason] of [
        [dir, 'unable to open database file'],
        [notes, 'file is not a database'],
      ]) {
        const unusable = cdapi(['companies', 'list'], { DATABASE_URL: `sqlite:${path}` });
        assert.equal(unusable.status, 1);
        assert.equal(
          unusable.stderr,
          `cdapi: configuration: DATABASE_URL: cannot use ${path} as the SQLite database: ${reason}\n`,
        );
      }
    });

  // The SQLite file of its own, whichever database the other tests use: checked once.
  if (dialect === 'sqlite') {
    it('administers only a SQLite database that exists: a mistyped path is not made', (t) => {
      const dir = useTempDir(t);
      const typo = join(dir, 'compnay-data.db');
      const env = { DATABASE_URL: `sqlite:${typo}`, RECEIPTS_DIR: join(dir, 'receipts') };
      for (const args of [
        ['companies', 'list'],
        ['companies', 'deactivate', '1'],
        ['companies', 'purge', '1', '--confirm', '1'],
        ['keys', 'create', '--company', '1', '--name', 'x'],
        ['keys', 'list', '--company', '1'],
        ['keys', 'revoke', '1'],
      ]) {
        const result = cdapi(args, env);
        assert.equal(result.status, 1, args.join(' '));
        assert.equal(
          result.stderr,
          `cdapi: configuration: DATABASE_URL: names ${typo}, which does not exist: cdapi serve, import, migrate or demo makes the database; check the path\n`,
          args.join(' '),
        );
        assert.equal(existsSync(typo), false, args.join(' '));
      }
      const unset = cdapi(['companies', 'list', '--json'], {}, { cwd: dir });
      assert.equal(unset.status, 1);
      assert.deepEqual(JSON.parse(unset.stderr), {
        error: `configuration: DATABASE_URL: is not set, and its default, ${join(dir, 'data', 'company-data.db')}, does not exist: cdapi serve, import, migrate or demo makes the database; check the path`,
        variable: 'DATABASE_URL',
      });
      // The commands that start from nothing make it.
      assert.deepEqual(cdapiJson(['migrate'], env), { applied: MIGRATIONS });
      assert.deepEqual(cdapiJson(['companies', 'list'], env), []);
    });
  }

  it('demo creates a company with generated data, receipts and a working key', async (t) => {
    const { env, handle } = await setup(t);
    const demo = cdapiJson<{
      company_id: number;
      key_id: number;
      key: string;
      counts: Record<string, number>;
    }>(['demo', '--employees', '8'], env);
    assert.equal(demo.company_id, 1);
    assert.ok(isWellFormedApiKey(demo.key));
    assert.equal(demo.counts.employee, 8);
    assert.ok((demo.counts.leave ?? 0) > 8);
    assert.ok((demo.counts.expense ?? 0) > 8);
    assert.ok(listFiles(env.RECEIPTS_DIR).length > 0);
    // The counts are what the company holds, after the demo's own deletions.
    for (const [type, table] of [
      ['employee', 'employees'],
      ['leave', 'leaves'],
      ['expense', 'expenses'],
    ] as const) {
      const stored = await handle.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(demo.counts[type], Number(stored.n), type);
    }
    const statuses = await handle.db
      .selectFrom('leaves')
      .select('status')
      .distinct()
      .orderBy('status')
      .execute();
    assert.deepEqual(
      statuses.map((s) => s.status),
      ['approved', 'cancelled', 'pending', 'rejected'],
    );
    // A second demo company gets fresh ids and never replaces the first.
    const second = cdapiJson<{ company_id: number }>(['demo', '--employees', '3'], env);
    assert.equal(second.company_id, 2);
    const employees = await handle.db.selectFrom('employees').select('id').execute();
    assert.equal(employees.length, 11);
  });

  it('demo says so when no id is left for a demo company, and writes nothing', async (t) => {
    const { env, handle, dir } = await setup(t);
    // An id of 2^53 − 1 is a valid id; the demo's ids would follow it.
    const last = Number.MAX_SAFE_INTEGER;
    cdapi(['import', writeNdjson(dir, [company(1), employee(1, last)])], env);
    const before = await snapshotDatabase(handle.db);
    const result = cdapi(['demo', '--employees', '3'], env);
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      `cdapi: no employee id is left for a demo company: they follow the highest one stored, which is at or near ${last} (2^53 − 1), the largest an id can be; make the demo in another database\n`,
    );
    assert.deepEqual(await snapshotDatabase(handle.db), before);
  });

  if (dialect === 'postgres') {
    it('refuses to work on a PostgreSQL database that is not migrated', async (t) => {
      const { env } = await setup(t, { migrate: false });
      const result = cdapi(['companies', 'list'], env);
      assert.equal(result.status, 1);
      assert.equal(
        result.stderr,
        `cdapi: the database schema is not up to date (${MIGRATIONS.length} pending): run cdapi migrate\n`,
      );
    });

    it('names DATABASE_URL when PostgreSQL refuses the login or the database', async (t) => {
      const { env } = await setup(t);
      const noRole = new URL(env.DATABASE_URL);
      noRole.username = 'cdapi_no_such_role';
      const noDatabase = new URL(env.DATABASE_URL);
      noDatabase.pathname = '/cdapi_no_such_database';
      for (const [url, problem] of [
        [noRole, 'role "cdapi_no_such_role" does not exist'],
        [noDatabase, 'database "cdapi_no_such_database" does not exist'],
      ] as const) {
        for (const args of [['migrate'], ['keys', 'list', '--company', '1']]) {
          const result = cdapi([...args, '--json'], { ...env, DATABASE_URL: String(url) });
          assert.equal(result.status, 1, args.join(' '));
          assert.deepEqual(JSON.parse(result.stderr), {
            error: `cannot connect to the database (DATABASE_URL): ${problem}`,
            variable: 'DATABASE_URL',
          });
        }
      }
      // The replica's refusal is told by its own variable, not blamed on DATABASE_URL.
      const serve = cdapi(['serve', '--port', '0'], {
        ...env,
        DATABASE_READ_URL: String(noDatabase),
        SIGNING_SECRET: 's'.repeat(32),
        RECEIPTS_DIR: env.RECEIPTS_DIR ?? '/tmp',
      });
      assert.equal(serve.status, 1);
      assert.equal(
        serve.stderr,
        'cdapi: DATABASE_READ_URL: the read replica cannot be used: database "cdapi_no_such_database" does not exist\n',
      );
    });
  }
});
