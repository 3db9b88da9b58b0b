import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cdapi } from '../helpers/cli.ts';
import { useTempDir } from '../helpers/databases.ts';
import { company } from '../helpers/records.ts';
import { freePort } from '../helpers/serve.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** Every variable config.ts reads, from its source: help must name each one. */
const CONFIG_VARIABLES = [
  ...new Set(
    [...readFileSync(join(ROOT, 'src/config.ts'), 'utf8').matchAll(/\benv\.([A-Z_]+)/g)].map(
      (m) => m[1] as string,
    ),
  ),
];

/**
 * `cdapi serve ARGS`, and what it wrote on stderr once that matches `until` (by default its
 * first line, the start-up line); killed when the test ends. Its temporary files
 * (the admin listener's import folder) go to the test's own folder, which outlives no kill.
 */
async function startServe(
  t: TestContext,
  args: string[],
  env: Record<string, string>,
  until = /\n/,
) {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, 'bin/cdapi.js'), 'serve', ...args],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TMPDIR: useTempDir(t),
        ...env,
      },
    },
  );
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const exited = once(child, 'exit');
  while (!until.test(err)) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${err}`);
    await Promise.race([once(child.stderr as NodeJS.ReadableStream, 'data'), exited]);
  }
  return err;
}

describe('cdapi usage', () => {
  it('says which Node.js it needs, on one that is too old', () => {
    // Node 20.1, as far as the CLI can tell (the project's own Node runs it).
    const older =
      'data:text/javascript,for (const [o, k, v] of [[process.versions, "node", "20.1.0"], [process, "version", "v20.1.0"]]) Object.defineProperty(o, k, { value: v })';
    const result = spawnSync(
      process.execPath,
      ['--import', older, join(ROOT, 'bin/cdapi.js'), '--help'],
      { encoding: 'utf8' },
    );
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      "cdapi: Node.js 22.12 or later is required (this is v20.1.0); npx cdapi runs on the project's own Node\n",
    );
  });

  it('--version prints the package version', () => {
    for (const flag of ['--version', '-V']) {
      const result = cdapi([flag], {});
      assert.equal(result.status, 0);
      assert.equal(result.stdout, `${version}\n`);
    }
  });

  it('--help shows examples and names the environment variables', () => {
    const help = cdapi(['--help'], {});
    assert.equal(help.status, 0);
    assert.match(help.stdout, /\nExamples:\n {2}npx cdapi serve --demo/);
    for (const name of ['DATABASE_URL', 'RECEIPTS_DIR', 'LOG_LEVEL']) {
      assert.match(help.stdout, new RegExp(`\\n {2}${name}\\n`), name);
    }
    const serveHelp = cdapi(['serve', '--help'], {});
    assert.equal(serveHelp.status, 0);
    assert.match(serveHelp.stdout, /--port <port>/);
    assert.match(serveHelp.stdout, /--host <host>/);
    assert.match(serveHelp.stdout, /--json/);
    assert.match(serveHelp.stdout, /\nExamples:\n/);
    assert.ok(CONFIG_VARIABLES.length >= 20, 'the variables were read from config.ts');
    for (const name of CONFIG_VARIABLES) {
      assert.match(serveHelp.stdout, new RegExp(`\\b${name}\\b`), `serve --help names ${name}`);
    }
    const importHelp = cdapi(['import', '--help'], {});
    assert.match(importHelp.stdout, /\nExamples:\n {2}npx cdapi import export\.ndjson\n/);
    assert.match(importHelp.stdout, /--progress-every <seconds>/);
  });

  it('stops with a one-line reason, not for ever, when the database’s folder cannot be made (under /proc)', {
    skip: process.platform !== 'linux' && 'no /proc on this system',
  }, () => {
    // Node's own recursive mkdir spins at a full core on such a path and never returns.
    const result = cdapi(['migrate'], { DATABASE_URL: 'sqlite:/proc/cdapi-test/a.db' });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      "cdapi: configuration: DATABASE_URL: cannot use /proc/cdapi-test/a.db as the SQLite database: ENOENT: no such file or directory, mkdir '/proc/cdapi-test'\n",
    );
  });

  it('says which address it cannot listen on, and by which settings', async (t) => {
    const dir = useTempDir(t);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const { port } = taken.address() as AddressInfo;
    const result = cdapi(['serve', '--port', String(port)], {
      DATABASE_URL: `sqlite:${join(dir, 'a.db')}`,
    });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr.trimEnd().split('\n').at(-1),
      `cdapi: cannot listen on 127.0.0.1:${port} (HOST, PORT): listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
    );
    // --demo seeds only once it listens: no company is left whose key was never shown.
    const env = { DATABASE_URL: `sqlite:${join(dir, 'demo.db')}` };
    const demo = cdapi(['serve', '--demo', '--port', String(port)], env);
    assert.equal(demo.status, 1);
    assert.match(demo.stderr, /cannot listen on/);
    assert.doesNotMatch(demo.stderr, /demo company/);
    const companies = cdapi(['companies', 'list', '--json'], env);
    assert.equal(companies.status, 0, companies.stderr);
    assert.deepEqual(JSON.parse(companies.stdout), []);
  });

  it('says in one line that a command group needs its command, instead of printing its help', () => {
    for (const [args, line] of [
      [[], 'cdapi: give a command: run cdapi --help to list them\n'],
      [['keys'], 'cdapi: keys needs a command: run cdapi keys --help to list them\n'],
      [
        ['companies'],
        'cdapi: companies needs a command: run cdapi companies --help to list them\n',
      ],
    ] as const) {
      const result = cdapi([...args], {});
      assert.equal(result.status, 1, args.join(' '));
      assert.equal(result.stderr, line);
      assert.equal(result.stdout, '');
    }
    const help = cdapi(['keys', '--help'], {});
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: cdapi keys \[options\] \[command\]/);
  });

  it('with --json, a failure is one JSON line on stderr, usage errors included', () => {
    const unknown = cdapi(['frobnicate', '--json'], {});
    assert.equal(unknown.status, 1);
    assert.equal(unknown.stdout, '');
    assert.deepEqual(JSON.parse(unknown.stderr), { error: "unknown command 'frobnicate'" });
    const config = cdapi(['companies', 'list', '--json'], { DATABASE_URL: 'mysql://x/y' });
    assert.equal(config.status, 1);
    assert.deepEqual(JSON.parse(config.stderr), {
      error: 'configuration: DATABASE_URL: must start with sqlite:, postgres:// or postgresql://',
      variable: 'DATABASE_URL',
    });
  });

  it('serve takes --port and --host over PORT and HOST, and --json prints the start-up line as JSON', async (t) => {
    const dir = useTempDir(t);
    const port = await freePort();
    const line = await startServe(t, ['--port', String(port), '--host', '127.0.0.1', '--json'], {
      DATABASE_URL: `sqlite:${join(dir, 'serve.db')}`,
      SIGNING_SECRET: 'usage-test-signing-secret-0123456789',
      PORT: '1',
      HOST: '192.0.2.1',
    });
    assert.deepEqual(JSON.parse(line), {
      url: `http://127.0.0.1:${port}/api/company/v1`,
      metrics_url: null,
      admin_url: null,
      demo_key: null,
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.deepEqual(await health.json(), { status: 'ok' });
  });

  it('serve --demo on a database with data names the command that makes a key for its first company in it', async (t) => {
    const dir = join(useTempDir(t), "it's here");
    mkdirSync(dir);
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'data.db')}`,
      SIGNING_SECRET: 'usage-test-signing-secret-0123456789',
    };
    const file = join(dir, 'companies.ndjson');
    writeFileSync(file, `${JSON.stringify(company(9))}\n${JSON.stringify(company(7))}\n`);
    assert.equal(cdapi(['import', file], env).status, 0);
    const port = await freePort();
    const text = await startServe(t, ['--demo', '--port', String(port)], env, /A new key: .*\n/);
    const command = /A new key: (.*)\n/.exec(text)?.[1] ?? '';
    assert.equal(
      command,
      `DATABASE_URL='sqlite:${dir.replace("'", "'\\''")}/data.db' npx cdapi keys create --company 7 --name dev`,
    );
    // Pasted into a shell in the checkout, it makes the key in that database.
    const made = spawnSync('sh', ['-c', command], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const key = /cdk_\w+/.exec(made.stdout)?.[0];
    const me = await fetch(`http://127.0.0.1:${port}/api/company/v1/me`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(((await me.json()) as { company: { id: number } }).company.id, 7);
  });

  it('serve with ADMIN_PORT starts the admin listener beside the API, and needs ADMIN_TOKEN', async (t) => {
    const dir = useTempDir(t);
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'serve.db')}`,
      SIGNING_SECRET: 'usage-test-signing-secret-0123456789',
      ADMIN_PORT: String(await freePort()),
    };
    const refused = cdapi(['serve'], env);
    assert.equal(refused.status, 1);
    assert.equal(
      refused.stderr,
      'cdapi: configuration: ADMIN_TOKEN: is required when ADMIN_PORT is set\n',
    );
    const port = await freePort();
    const token = 'usage-test-admin-token-0123456789abcdef';
    const line = await startServe(t, ['--port', String(port), '--json'], {
      ...env,
      ADMIN_TOKEN: token,
    });
    const started = JSON.parse(line);
    assert.equal(started.admin_url, `http://127.0.0.1:${env.ADMIN_PORT}/admin`);
    const companies = await fetch(`${started.admin_url}/companies`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.deepEqual(await companies.json(), { data: [] });
    const panel = await fetch(started.admin_url);
    assert.equal(panel.status, 200);
    assert.match(await panel.text(), /<title>Company Data API: API keys<\/title>/);
    // The public listener knows nothing of it.
    assert.equal((await fetch(`http://127.0.0.1:${port}/admin/companies`)).status, 404);
  });
});
