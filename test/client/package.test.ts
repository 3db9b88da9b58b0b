import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  type ChangesPage,
  createClient,
  type Employee,
  type Expense,
  type LeaveDetail,
  type LeaveType,
  type OkBody,
  type Page,
} from '../../client/src/index.ts';
import { main } from '../../client/src/pull/main.ts';
import { useApi } from '../helpers/api.ts';
import { useTempDir } from '../helpers/databases.ts';
import { listenApi } from '../helpers/listen.ts';
import { expense, smallCompany, writeJpeg } from '../helpers/records.ts';
import { freePort } from '../helpers/serve.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GENERATED = join(ROOT, 'client/src/generated/openapi.ts');
const PULL_BIN = join(ROOT, 'node_modules/.bin/cdapi-pull');

describe('the client package', () => {
  it('has its generated types in step with openapi.json (regenerate: npm run generate -w client)', (t) => {
    const out = join(useTempDir(t), 'openapi.ts');
    execFileSync(
      join(ROOT, 'node_modules/.bin/openapi-typescript'),
      [join(ROOT, 'openapi.json'), '-o', out],
      { stdio: 'pipe' },
    );
    assert.equal(readFileSync(GENERATED, 'utf8'), readFileSync(out, 'utf8'));
  });

  it('is imported by its name from plain Node, as a user would', async (t) => {
    const api = await useApi(t, 'sqlite', { records: smallCompany(1, 0) });
    const base = await listenApi(api);
    const key = await api.createKey(1);
    const script = `
      import { createClient, ApiError } from '@company-data-api/client';
      const client = createClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY });
      const me = await client.me();
      const missing = await client.leaves.get(404).catch((e) => e);
      console.log(JSON.stringify({ company: me.company.id, error: missing instanceof ApiError, code: missing.code }));
    `;
    // Not spawnSync: the service answering it runs in this process.
    const child = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', script],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, BASE: base, KEY: key },
      },
    );
    assert.equal(child.stderr, '');
    assert.deepEqual(JSON.parse(child.stdout), { company: 1, error: true, code: 'not_found' });
  });

  it('runs the README’s quick start as written, and it passes strict TypeScript', async (t) => {
    const readme = readFileSync(join(ROOT, 'client/README.md'), 'utf8');
    const quickStart = /## Quick start\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    assert.match(
      quickStart,
      /createClient\(\{ baseUrl: 'https:\/\/api\.example\.com\/api\/company\/v1'/,
    );
    const api = await useApi(t, 'sqlite');
    await writeJpeg(api.dir, 'slip.jpg');
    await api.load([
      ...smallCompany(1, 0),
      expense(1, 2, 1, 1, { receipt: { original: 'slip.jpg' } }),
    ]);
    const base = await listenApi(api);
    const script = quickStart.replace('https://api.example.com/api/company/v1', base);
    // Saved in the checkout, as the README says (the package resolves from there).
    const dir = join(ROOT, 'node_modules/.cache', `quickstart-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'quickstart.mjs'), script);
    const run = await promisify(execFile)(process.execPath, [join(dir, 'quickstart.mjs')], {
      env: { PATH: process.env.PATH, CDAPI_KEY: await api.createKey(1) },
    });
    assert.equal(run.stderr, '');
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines.find((line) => line.startsWith('image/jpeg')) ?? '', /^image\/jpeg \d+$/);
    assert.match(lines.at(-1) ?? '', /^404 not_found [\w-]+$/);
    writeFileSync(join(dir, 'quickstart.ts'), script);
    const strict = spawnSync(
      join(ROOT, 'node_modules/.bin/tsc'),
      [
        '--strict',
        '--noEmit',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        join(dir, 'quickstart.ts'),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(strict.status, 0, strict.stdout);
  });

  it('refuses to be packed without TypeScript, which would make a package with no code', (t) => {
    // A copy outside the checkout, where TypeScript does not resolve: a fresh clone before
    // its root `npm install`, or an install without devDependencies.
    const copy = useTempDir(t);
    cpSync(join(ROOT, 'client/scripts'), join(copy, 'scripts'), { recursive: true });
    const build = (npmCommand: string) =>
      spawnSync(process.execPath, ['scripts/build.mjs'], {
        cwd: copy,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, npm_command: npmCommand },
      });
    for (const command of ['pack', 'publish']) {
      const packed = build(command);
      assert.equal(packed.status, 1, command);
      assert.match(
        packed.stderr,
        /dist\/ cannot be built: run `npm install` at the repository root/,
      );
    }
    // `npm ci --omit=dev` (the service's production image) goes on without the client.
    const installed = build('ci');
    assert.equal(installed.status, 0);
    assert.match(installed.stderr, /TypeScript is not installed \(devDependencies left out\)/);
    assert.equal(existsSync(join(copy, 'dist')), false);
  });

  it('installs cdapi-pull as a command that takes the key only from CDAPI_KEY', () => {
    const help = spawnSync(PULL_BIN, ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(
      help.stdout,
      /^Usage: CDAPI_KEY=cdk_… cdapi-pull --base-url URL --out FILE\.sqlite/,
    );
    const keyless = spawnSync(PULL_BIN, ['--base-url', 'http://127.0.0.1:1', '--out', 'x.sqlite'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    assert.equal(keyless.status, 2);
    assert.equal(
      keyless.stderr,
      'cdapi-pull: set CDAPI_KEY to the API key (it is never taken as an argument)\nRun cdapi-pull --help for the options.\n',
    );
    const keyArgument = spawnSync(PULL_BIN, ['--key', 'cdk_x'], { encoding: 'utf8' });
    assert.equal(keyArgument.status, 2);
    assert.match(keyArgument.stderr, /^cdapi-pull: an API key is never taken as an argument/);
    assert.equal(keyArgument.stderr.includes('cdk_x'), false, keyArgument.stderr);
    // A file name that starts like a key is a file name.
    const file = spawnSync(PULL_BIN, ['--out', 'cdk_backup.sqlite'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    assert.equal(file.status, 2);
    assert.match(file.stderr, /^cdapi-pull: --base-url is required/);
  });

  it('cdapi-pull names what failed: a base URL that is not one, a service it cannot reach, an output file it cannot open', async (t) => {
    const dir = useTempDir(t);
    const run = (args: string[]) =>
      spawnSync(PULL_BIN, args, {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, CDAPI_KEY: 'cdk_x' },
        cwd: dir,
        timeout: 60_000,
      });
    const notUrl = run(['--base-url', 'api.example.com', '--out', 'x.sqlite']);
    assert.equal(notUrl.status, 2);
    assert.equal(
      notUrl.stderr,
      'cdapi-pull: --base-url must be an http:// or https:// URL, such as http://127.0.0.1:8080/api/company/v1 (not api.example.com)\nRun cdapi-pull --help for the options.\n',
    );
    // Numbers as the cdapi command takes them: plain digits, no leading zeros.
    for (const size of ['010', '0', '1001', '1e2', ' 5']) {
      const pageSize = run([
        '--base-url',
        'http://127.0.0.1:1',
        '--out',
        'x.sqlite',
        '--page-size',
        size,
      ]);
      assert.equal(pageSize.status, 2, size);
      assert.equal(
        pageSize.stderr,
        'cdapi-pull: --page-size: a whole number from 1 to 1000, in plain digits\nRun cdapi-pull --help for the options.\n',
        size,
      );
    }
    // fetch refuses a URL with credentials; its error showed the password after five retries.
    const password = run([
      '--base-url',
      'http://user:s3cret@127.0.0.1:1/api/company/v1',
      '--out',
      'x.sqlite',
    ]);
    assert.equal(password.status, 2);
    assert.equal(
      password.stderr,
      'cdapi-pull: --base-url must not hold a user name or password (not shown here): the key goes in CDAPI_KEY\nRun cdapi-pull --help for the options.\n',
    );
    const port = await freePort();
    const closed = run([
      '--base-url',
      `http://127.0.0.1:${port}/api/company/v1`,
      '--out',
      'x.sqlite',
    ]);
    assert.equal(closed.status, 1);
    assert.equal(
      closed.stderr.trimEnd().split('\n').at(-1),
      `cdapi-pull: cannot reach the service: connect ECONNREFUSED 127.0.0.1:${port}; once it answers, run again`,
    );
    assert.equal(
      existsSync(join(dir, 'x.sqlite')),
      false,
      'a first run that failed leaves no file',
    );
    const folder = run(['--base-url', 'http://127.0.0.1:1/api/company/v1', '--out', dir]);
    assert.equal(folder.status, 1);
    assert.equal(folder.stderr, `cdapi-pull: cannot open the output file ${dir}: it is a folder\n`);
  });

  it('cdapi-pull says in one line that an https:// base URL names a service without TLS', async (t) => {
    const dir = useTempDir(t);
    const server = createHttpServer((_, res) => res.end('plain')).listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    let err = '';
    const code = await main(
      ['--base-url', `https://127.0.0.1:${port}/api/company/v1`, '--out', join(dir, 'x.sqlite')],
      { CDAPI_KEY: 'cdk_x' },
      { write: () => true },
      {
        write: (text: string) => {
          err += text;
          return true;
        },
      },
    );
    assert.equal(code, 1);
    assert.equal(
      err.split('\n').filter(Boolean).at(-1),
      'cdapi-pull: cannot reach the service: it does not speak TLS (https:// in --base-url for an http:// service?)',
    );
  });

  it('types path ids as integers, multi-value filters as arrays, bodies as the document says', () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1/api/company/v1', apiKey: 'k' });
    // Compiled by `npm run check`: each line below fails it if a type drifts from the contract.
    const compiled = [
      // @ts-expect-error a path id is a number
      () => client.leaves.get('7'),
      // @ts-expect-error a multi-value filter is an array
      () => client.leaves.list({ employee_id: '1,2' }),
      // @ts-expect-error statuses are the resource's own
      () => client.expenses.list({ status: ['on_hold'] }),
      () => client.leaves.list({ employee_id: [1, 2], leave_type_id: [3], status: ['approved'] }),
      () => client.expenses.list({ category_id: [1], status: ['paid', 'pending'] }),
      // @ts-expect-error all() reads every page from the first
      () => client.employees.all({ page: 3 }),
      () => client.employees.all({ per_page: 50, status: ['active'] }),
    ];
    const employees: OkBody<'/employees'> = {} as Page<Employee>;
    const expenses: Page<Expense> = {} as OkBody<'/expenses'>;
    const leave: LeaveDetail = {} as OkBody<'/leaves/{id}'>['data'];
    const types: LeaveType[] = {} as OkBody<'/leave-types'>['data'];
    const feed: OkBody<'/changes'> = {} as ChangesPage;
    assert.equal(compiled.length, 7);
    assert.deepEqual([employees, expenses, leave, types, feed], [{}, {}, {}, {}, {}]);
  });
});
