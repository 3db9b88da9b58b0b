import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import {
  forgetAdminTokens,
  loadConfig,
  loadServerConfig,
  requireReceiptsDir,
} from '../../src/config.ts';
import { ConfigError } from '../../src/config-error.ts';

const secret = 'x'.repeat(40);
/** What every PostgreSQL server configuration below has besides its own settings. */
const pg = { SIGNING_SECRET: secret, RECEIPTS_DIR: '/srv/receipts' };
const adminToken = 't0ken-of-32-printable-characters!';

describe('configuration', () => {
  it('turns the admin listener on with ADMIN_PORT, keeping only the tokens’ digests', () => {
    assert.equal(loadServerConfig(pg).admin, null);
    const env: NodeJS.ProcessEnv = {
      ...pg,
      ADMIN_PORT: '9091',
      ADMIN_TOKEN: adminToken,
      ADMIN_TOKEN_PREVIOUS: `old-${adminToken}`,
      ADMIN_TOKEN_LABEL: 'hr-platform',
    };
    const admin = loadServerConfig(env).admin;
    assert.equal(admin?.port, 9091);
    assert.equal(admin?.trustProxy, false);
    assert.equal(
      loadServerConfig({ ...env, TRUST_PROXY: 'true' }).admin?.trustProxy,
      false,
      'the public side’s TRUST_PROXY is not the admin listener’s',
    );
    assert.equal(loadServerConfig({ ...env, ADMIN_TRUST_PROXY: 'true' }).admin?.trustProxy, true);
    assert.deepEqual(
      admin?.tokens.map((t) => [t.label, t.sha256.toString('hex')]),
      [
        ['hr-platform', createHash('sha256').update(adminToken).digest('hex')],
        ['hr-platform:previous', createHash('sha256').update(`old-${adminToken}`).digest('hex')],
      ],
    );
    assert.doesNotMatch(JSON.stringify(admin), /t0ken/);
    forgetAdminTokens(env);
    assert.deepEqual(
      Object.keys(env).filter((k) => k.startsWith('ADMIN_')),
      ['ADMIN_PORT', 'ADMIN_TOKEN_LABEL'],
    );
  });

  it('defaults to the embedded SQLite file under ./data, its receipts in ./data/receipts', () => {
    const config = loadConfig({});
    assert.equal(config.database.dialect, 'sqlite');
    assert.equal(
      config.database.dialect === 'sqlite' ? config.database.path : '',
      resolve('data/company-data.db'),
    );
    assert.equal(config.receiptsDir, resolve('data/receipts'));
  });

  it('keeps the receipts of any other SQLite file beside it, in a folder of its own', () => {
    const dir = resolve('/srv/scratch');
    const receiptsOf = (url: string) => loadConfig({ DATABASE_URL: url }).receiptsDir;
    assert.equal(receiptsOf(`sqlite:${dir}/company-data.db`), join(dir, 'receipts'));
    assert.equal(receiptsOf(`sqlite:${dir}/copy.db`), join(dir, 'copy-receipts'));
    assert.equal(receiptsOf(`sqlite:${dir}/test.sqlite3`), join(dir, 'test-receipts'));
    assert.equal(receiptsOf(`sqlite:${dir}/plain`), join(dir, 'plain-receipts'));
    assert.equal(
      loadConfig({ DATABASE_URL: `sqlite:${dir}/copy.db`, RECEIPTS_DIR: '/srv/store' }).receiptsDir,
      resolve('/srv/store'),
    );
  });

  it('checks PORT and HOST from the environment even where --port and --host override them', () => {
    const env = { DATABASE_URL: 'sqlite::memory:', RECEIPTS_DIR: 'store' };
    assert.equal(loadServerConfig({ ...env, PORT: '9000' }, { port: 9090 }).port, 9090);
    assert.throws(
      () => loadServerConfig({ ...env, PORT: 'abc' }, { port: 9090 }),
      /^ConfigError: PORT: must be a whole number, got "abc"/,
    );
    assert.equal(loadServerConfig({ ...env, HOST: '::1' }).host, '::1');
    for (const host of ['bad host', '127.0.0.1 ', 'a/b']) {
      for (const overrides of [{}, { host: '127.0.0.1' }]) {
        assert.throws(
          () => loadServerConfig({ ...env, HOST: host }, overrides),
          /^ConfigError: HOST: must be a host name or an IP address$/,
        );
      }
    }
  });

  it('refuses a RECEIPTS_DIR with white space at its ends', () => {
    for (const dir of [' ', '/srv/receipts ', '\t/srv/receipts']) {
      assert.throws(
        () => loadConfig({ RECEIPTS_DIR: dir }),
        /^ConfigError: RECEIPTS_DIR: must not begin or end with white space$/,
      );
    }
    assert.equal(
      loadConfig({ RECEIPTS_DIR: '/srv/my receipts' }).receiptsDir,
      resolve('/srv/my receipts'),
    );
  });

  it('needs RECEIPTS_DIR with PostgreSQL only where receipts are read or written', () => {
    const env = { DATABASE_URL: 'postgres://u@localhost/db', SIGNING_SECRET: secret };
    const config = loadConfig(env);
    assert.equal(config.receiptsDir, null);
    assert.throws(
      () => requireReceiptsDir(config),
      /^ConfigError: RECEIPTS_DIR: is required when DATABASE_URL is PostgreSQL/,
    );
    assert.throws(
      () => loadServerConfig(env),
      /^ConfigError: RECEIPTS_DIR: is required when DATABASE_URL is PostgreSQL/,
    );
    assert.throws(
      () => requireReceiptsDir(loadConfig({ DATABASE_URL: 'sqlite::memory:' })),
      /^ConfigError: RECEIPTS_DIR: is required with an in-memory SQLite database/,
    );
    const given = loadServerConfig({ ...env, RECEIPTS_DIR: 'store' });
    assert.equal(given.receiptsDir, resolve('store'));
  });

  it('picks PostgreSQL from a postgres:// DATABASE_URL and then requires SIGNING_SECRET', () => {
    const env = { DATABASE_URL: 'postgres://u@localhost/db', RECEIPTS_DIR: '/srv/receipts' };
    assert.equal(loadConfig(env).database.dialect, 'postgres');
    assert.throws(
      () => loadServerConfig(env),
      /SIGNING_SECRET: is required when DATABASE_URL is PostgreSQL/,
    );
    assert.equal(loadServerConfig({ ...env, SIGNING_SECRET: secret }).signingSecret, secret);
  });

  it('reads the server settings', () => {
    const config = loadServerConfig({
      DATABASE_URL: 'postgres://u@localhost/db',
      ...pg,
      PORT: '9090',
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'https://api.example.com/api/company/v1/',
      SIGNED_URL_TTL_SECONDS: '60',
      TRUST_PROXY: 'true',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    assert.equal(config.port, 9090);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.publicBaseUrl, 'https://api.example.com/api/company/v1');
    assert.equal(config.signedUrlTtlSeconds, 60);
    assert.equal(config.trustProxy, true);
    assert.equal(config.redisUrl, 'redis://127.0.0.1:6379');
    assert.ok(Object.isFrozen(config));
    // The base URL as the URL parser writes it, so every URL built on it is one.
    for (const [raw, base] of [
      ['http:/api.example.com/v1', 'http://api.example.com/v1'],
      ['HTTPS://API.Example.com:443/v1/"<x>"', 'https://api.example.com/v1/%22%3Cx%3E%22'],
    ]) {
      const read = loadServerConfig({
        DATABASE_URL: 'postgres://u@localhost/db',
        ...pg,
        PUBLIC_BASE_URL: raw,
      });
      assert.equal(read.publicBaseUrl, base, raw);
    }
    for (const redisUrl of [
      'redis://127.0.0.1:6379/3',
      'rediss://u:p@cache.internal',
      'redis://[::1]:6380/',
    ]) {
      const read = loadServerConfig({
        DATABASE_URL: 'postgres://u@localhost/db',
        ...pg,
        REDIS_URL: redisUrl,
      });
      assert.equal(read.redisUrl, redisUrl);
    }
    // A yes-or-no variable, as README lists its spellings.
    for (const [raw, value] of [
      ['TRUE', true],
      ['1', true],
      ['Yes', true],
      ['False', false],
      ['0', false],
      ['NO', false],
    ] as const) {
      const read = loadServerConfig({
        DATABASE_URL: 'postgres://u@localhost/db',
        ...pg,
        TRUST_PROXY: raw,
      });
      assert.equal(read.trustProxy, value, raw);
    }
  });

  it('defaults the scale-out settings, and reads them', () => {
    const defaults = loadServerConfig({
      DATABASE_URL: 'postgres://u@primary/db',
      ...pg,
    });
    assert.equal(defaults.readDatabase, null);
    assert.equal(defaults.poolMax, 10);
    assert.equal(defaults.readPoolMax, 10);
    assert.equal(defaults.statementTimeoutMs, 10_000);
    assert.equal(defaults.redisUrl, null);
    assert.equal(defaults.redisKeyPrefix, 'cdapi:');
    assert.equal(defaults.responseCacheMb, 16);

    const config = loadServerConfig({
      DATABASE_URL: 'postgres://u@primary/db',
      DATABASE_READ_URL: 'postgres://u@replica/db',
      DATABASE_POOL_MAX: '4',
      DATABASE_STATEMENT_TIMEOUT_MS: '2500',
      REDIS_KEY_PREFIX: 'tenant-a:',
      ...pg,
    });
    assert.deepEqual(config.readDatabase, { dialect: 'postgres', url: 'postgres://u@replica/db' });
    assert.equal(config.poolMax, 4);
    assert.equal(config.readPoolMax, 4, 'the read pool follows DATABASE_POOL_MAX unless set');
    assert.equal(config.statementTimeoutMs, 2500);
    assert.equal(config.redisKeyPrefix, 'tenant-a:');
    const readPool = loadServerConfig({
      DATABASE_URL: 'postgres://u@primary/db',
      DATABASE_READ_URL: 'postgres://u@replica/db',
      DATABASE_READ_POOL_MAX: '40',
      ...pg,
    });
    assert.equal(readPool.readPoolMax, 40);
  });

  it('keeps the secret and the receipts beside the file a link to the database leads to', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cdapi-linked-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'hr.db'), '');
    symlinkSync(join(dir, 'real', 'hr.db'), join(dir, 'link.db'));
    // Dangling: SQLite makes the file the chain of links leads to.
    symlinkSync('later.db', join(dir, 'real', 'next.db'));
    symlinkSync(join(dir, 'real', 'next.db'), join(dir, 'chain.db'));
    const direct = loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'real', 'hr.db')}` });
    const linked = loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'link.db')}` });
    assert.equal(linked.receiptsDir, join(dir, 'real', 'hr-receipts'));
    assert.equal(linked.signingSecret, direct.signingSecret);
    assert.equal(existsSync(join(dir, 'link-signing-secret')), false);
    const chained = loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'chain.db')}` });
    assert.equal(chained.receiptsDir, join(dir, 'real', 'later-receipts'));
    assert.equal(
      readFileSync(join(dir, 'real', 'later-signing-secret'), 'utf8'),
      `${chained.signingSecret}\n`,
    );
  });

  it('refuses SQLite URI options, which would become part of the file name', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'sqlite:./data/a.db?mode=ro' }),
      /^ConfigError: DATABASE_URL: sqlite: takes a file path alone, without options \(\?…\): \.\/data\/a\.db$/,
    );
  });

  it('refuses a database path that is a loop of symbolic links, making nothing beside it', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cdapi-loop-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(dir, 'b.db'), join(dir, 'a.db'));
    symlinkSync(join(dir, 'a.db'), join(dir, 'b.db'));
    for (const env of [
      { DATABASE_URL: `sqlite:${join(dir, 'a.db')}` },
      // With the store and the secret given, nothing else would follow the links before SQLite.
      {
        DATABASE_URL: `sqlite:${join(dir, 'a.db')}`,
        RECEIPTS_DIR: dir,
        SIGNING_SECRET: 's'.repeat(32),
      },
    ]) {
      assert.throws(
        () => loadServerConfig(env),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message ===
            `DATABASE_URL: ${join(dir, 'a.db')} is a loop of symbolic links (or a chain of more than 40)`,
      );
    }
    assert.deepEqual(readdirSync(dir).sort(), ['a.db', 'b.db']);
  });

  it('refuses a RECEIPTS_DIR that is a loop of symbolic links, before a secret is made', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cdapi-loop-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(dir, 'store'), join(dir, 'store'));
    // Named, or the one beside the database (hr-receipts) when none is.
    symlinkSync(join(dir, 'hr-receipts'), join(dir, 'hr-receipts'));
    for (const [env, store] of [
      [{ RECEIPTS_DIR: join(dir, 'store') }, join(dir, 'store')],
      [{}, join(dir, 'hr-receipts')],
    ] as const) {
      assert.throws(
        () => loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'hr.db')}`, ...env }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message ===
            `RECEIPTS_DIR: ${store} is a loop of symbolic links (or a chain of more than 40)`,
      );
    }
    assert.deepEqual(readdirSync(dir).sort(), ['hr-receipts', 'store']);
  });

  it('keeps a generated signing secret beside the SQLite file, as it keeps the receipts', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cdapi-secret-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const named = loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'hr.db')}` });
    const file = join(dir, 'hr-signing-secret');
    assert.equal(readFileSync(file, 'utf8'), `${named.signingSecret}\n`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(named.receiptsDir, join(dir, 'hr-receipts'));
    assert.equal(
      loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'hr.db')}` }).signingSecret,
      named.signingSecret,
      'read again by the next process',
    );
    const byDefaultName = loadServerConfig({
      DATABASE_URL: `sqlite:${join(dir, 'company-data.db')}`,
    });
    assert.equal(
      readFileSync(join(dir, 'signing-secret'), 'utf8'),
      `${byDefaultName.signingSecret}\n`,
    );
    const before = readdirSync(dir).sort();
    const memory = { DATABASE_URL: 'sqlite::memory:', RECEIPTS_DIR: join(dir, 'receipts') };
    const inMemory = loadServerConfig(memory).signingSecret;
    assert.match(inMemory, /^[\w-]{43}$/);
    assert.notEqual(loadServerConfig(memory).signingSecret, inMemory);
    assert.deepEqual(readdirSync(dir).sort(), before, 'an in-memory database writes no file');
    // Where the secret cannot be kept, the message names the variables, not only an errno.
    assert.throws(
      () => loadServerConfig({ DATABASE_URL: 'sqlite:/proc/cdapi-test.db' }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.variable === 'SIGNING_SECRET' &&
        error.message.startsWith(
          'SIGNING_SECRET: is not set, and the secret kept beside the SQLite database (DATABASE_URL) cannot be read or made at /proc/cdapi-test-signing-secret: ',
        ),
    );
    // An emptied or cut secret file would sign with a key anyone can guess: refused.
    for (const kept of ['', '\n', 'short\n']) {
      writeFileSync(file, kept);
      assert.throws(
        () => loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'hr.db')}` }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message ===
            `SIGNING_SECRET: is not set, and the secret kept at ${file} is shorter than 32 characters: remove the file to have a new one made (signed URLs handed out before stop working), or set SIGNING_SECRET`,
        JSON.stringify(kept),
      );
    }
    rmSync(file);
    const remade = loadServerConfig({ DATABASE_URL: `sqlite:${join(dir, 'hr.db')}` });
    assert.notEqual(remade.signingSecret, named.signingSecret);
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
  });

  it('defaults the HTTP timeouts, and reads them', () => {
    const defaults = loadServerConfig({ SIGNING_SECRET: secret });
    assert.deepEqual(
      [defaults.headersTimeoutMs, defaults.requestTimeoutMs, defaults.keepAliveTimeoutMs],
      [10_000, 30_000, 72_000],
    );
    const config = loadServerConfig({
      ...pg,
      HTTP_HEADERS_TIMEOUT_MS: '45000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
    });
    assert.equal(config.headersTimeoutMs, 45_000);
    assert.equal(config.requestTimeoutMs, 45_000, 'never below the headers timeout by default');
    assert.equal(config.keepAliveTimeoutMs, 5000);
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [
      { DATABASE_URL: 'mysql://localhost/db' },
      /^DATABASE_URL: must start with sqlite:, postgres:\/\/ or postgresql:\/\//,
    ],
    [{ DATABASE_URL: 'sqlite:' }, /^DATABASE_URL: sqlite: needs a file path/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: must be one of/],
    [{ PORT: 'eighty' }, /^PORT: must be a whole number/],
    [{ PORT: '70000' }, /^PORT: must be between 0 and 65535/],
    [{ PUBLIC_BASE_URL: 'api.example.com' }, /^PUBLIC_BASE_URL: is not an absolute URL/],
    [
      { PUBLIC_BASE_URL: 'https://api.example.com/api/company/v1?x=1' },
      /^PUBLIC_BASE_URL: must not carry a query \(\?\) or a fragment/,
    ],
    [
      { PUBLIC_BASE_URL: 'https://api.example.com/api/company/v1#top' },
      /^PUBLIC_BASE_URL: must not carry a query \(\?\) or a fragment/,
    ],
    [
      { PUBLIC_BASE_URL: 'https://user:pw@api.example.com/api/company/v1' },
      /^PUBLIC_BASE_URL: must not carry a user name or password/,
    ],
    [{ SIGNED_URL_TTL_SECONDS: '0' }, /^SIGNED_URL_TTL_SECONDS: must be between 1 and/],
    [
      { TRUST_PROXY: 'maybe' },
      /^TRUST_PROXY: must be true or false \(1 or 0, yes or no, in any case\), got "maybe"$/,
    ],
    [{ REDIS_URL: 'localhost:6379' }, /^REDIS_URL: must start with redis:\/\//],
    [{ DATABASE_URL: 'sqlite: ' }, /^DATABASE_URL: sqlite: needs a file path/],
    [
      { DATABASE_URL: 'sqlite:/srv/cdapi/' },
      /^DATABASE_URL: \/srv\/cdapi\/ names a folder: give the database file's path, e\.g\. sqlite:\/srv\/cdapi\/company-data\.db$/,
    ],
    [{ REDIS_URL: 'redis://127.0.0.1:99999' }, /^REDIS_URL: is not a valid URL \(redis:\/\//],
    [{ REDIS_URL: 'redis://bad host:6379' }, /^REDIS_URL: is not a valid URL/],
    [
      { REDIS_URL: 'redis://127.0.0.1:6379/abc' },
      /^REDIS_URL: may end with a database number only/,
    ],
    [
      { PUBLIC_BASE_URL: ' https://api.example.com/v1 ' },
      /^PUBLIC_BASE_URL: must not contain white space/,
    ],
    [
      { PUBLIC_BASE_URL: 'https://api.example.com/a b' },
      /^PUBLIC_BASE_URL: must not contain white space/,
    ],
    [{ SIGNING_SECRET: 'short' }, /^SIGNING_SECRET: must be at least 32 characters/],
    [
      { SIGNING_SECRET: ' '.repeat(40) },
      /^SIGNING_SECRET: must be at least 32 characters, white space at its ends not counted$/,
    ],
    [
      { DATABASE_READ_URL: 'sqlite:./replica.db' },
      /^DATABASE_READ_URL: read replicas need PostgreSQL/,
    ],
    [
      { DATABASE_URL: 'sqlite:./data.db', DATABASE_READ_URL: 'postgres://u@replica/db' },
      /^DATABASE_READ_URL: read replicas need PostgreSQL/,
    ],
    [
      { DATABASE_READ_URL: 'replica:5432' },
      /^DATABASE_READ_URL: must start with sqlite:, postgres:\/\/ or postgresql:\/\//,
    ],
    [{ DATABASE_POOL_MAX: '0' }, /^DATABASE_POOL_MAX: must be between 1 and 1000/],
    [{ DATABASE_READ_POOL_MAX: 'many' }, /^DATABASE_READ_POOL_MAX: must be a whole number/],
    [
      { DATABASE_STATEMENT_TIMEOUT_MS: '-5' },
      /^DATABASE_STATEMENT_TIMEOUT_MS: must be a whole number/,
    ],
    [{ REDIS_KEY_PREFIX: 'has space:' }, /^REDIS_KEY_PREFIX: must be at most 64 printable/],
    [{ RESPONSE_CACHE_MB: '5000' }, /^RESPONSE_CACHE_MB: must be between 0 and 4096/],
    [{ SQLITE_READER_NICE: '20' }, /^SQLITE_READER_NICE: must be between 0 and 19/],
    [{ SQLITE_READER_NICE: '-5' }, /^SQLITE_READER_NICE: must be a whole number/],
    [{ HTTP_HEADERS_TIMEOUT_MS: '10s' }, /^HTTP_HEADERS_TIMEOUT_MS: must be a whole number/],
    [
      { HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' },
      /^HTTP_REQUEST_TIMEOUT_MS: must be at least HTTP_HEADERS_TIMEOUT_MS \(20000\)/,
    ],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' }, /^HTTP_KEEP_ALIVE_TIMEOUT_MS: must be between 100 and/],
    [{ ADMIN_PORT: '9091' }, /^ADMIN_TOKEN: is required when ADMIN_PORT is set/],
    [{ ADMIN_PORT: '8080', ADMIN_TOKEN: adminToken }, /^ADMIN_PORT: must differ from PORT/],
    [
      { ADMIN_PORT: '9091', METRICS_PORT: '9091', ADMIN_TOKEN: adminToken },
      /^ADMIN_PORT: must differ from METRICS_PORT \(9091\)/,
    ],
    [{ ADMIN_PORT: 'x', ADMIN_TOKEN: adminToken }, /^ADMIN_PORT: must be a whole number/],
    [{ METRICS_PORT: '05' }, /^METRICS_PORT: must be written without leading zeros, got "05"$/],
    [{ HTTP_HEADERS_TIMEOUT_MS: '010000' }, /^HTTP_HEADERS_TIMEOUT_MS: must be written without/],
    [{ ADMIN_TOKEN: 'short', ADMIN_PORT: '9091' }, /^ADMIN_TOKEN: must be 32 to 512 printable/],
    [
      { ADMIN_TOKEN: 'x'.repeat(513), ADMIN_PORT: '9091' },
      /^ADMIN_TOKEN: must be 32 to 512 printable/,
    ],
    [
      { ADMIN_TOKEN_PREVIOUS: adminToken, ADMIN_PORT: '9091', ADMIN_TOKEN: adminToken },
      /^ADMIN_TOKEN_PREVIOUS: is the same as ADMIN_TOKEN: while rotating, ADMIN_TOKEN is the new token and ADMIN_TOKEN_PREVIOUS the old one$/,
    ],
    [
      { ADMIN_TRUST_PROXY: 'maybe', ADMIN_PORT: '9091', ADMIN_TOKEN: adminToken },
      /^ADMIN_TRUST_PROXY: must be true or false/,
    ],
    [
      {
        ADMIN_TOKEN_PREVIOUS: 'has a space in it, so not a token!',
        ADMIN_PORT: '9091',
        ADMIN_TOKEN: adminToken,
      },
      /^ADMIN_TOKEN_PREVIOUS: must be 32 to 512 printable/,
    ],
    [
      { ADMIN_TOKEN_LABEL: 'two words', ADMIN_PORT: '9091', ADMIN_TOKEN: adminToken },
      /^ADMIN_TOKEN_LABEL: must be 1 to 64/,
    ],
  ];
  it('checks the admin variables that are set when ADMIN_PORT is not', () => {
    for (const [env, message] of [
      [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN: must be 32 to 512 printable/],
      [{ ADMIN_TOKEN_PREVIOUS: 'short' }, /^ADMIN_TOKEN_PREVIOUS: must be 32 to 512 printable/],
      [{ ADMIN_TOKEN_LABEL: 'two words' }, /^ADMIN_TOKEN_LABEL: must be 1 to 64/],
      [{ ADMIN_TRUST_PROXY: 'maybe' }, /^ADMIN_TRUST_PROXY: must be true or false/],
    ] as const) {
      assert.throws(
        () => loadServerConfig({ ...pg, ...env }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    }
    assert.equal(loadServerConfig({ ...pg, ADMIN_TOKEN: adminToken }).admin, null);
  });
  for (const [env, message] of bad) {
    it(`stops with a message naming ${Object.keys(env)[0]}`, () => {
      assert.throws(
        () =>
          loadServerConfig({
            DATABASE_URL: 'postgres://u@localhost/db',
            ...pg,
            ...env,
          }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }
});
