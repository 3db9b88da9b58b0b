import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import {
  describeServerMemory,
  hugePagesOf,
  isOnThisHost,
  serverMemory,
} from '../../bench/harness/server-memory.ts';
import { testDialects } from '../helpers/databases.ts';

/** /proc/meminfo's huge-page lines, as Linux writes them. */
const meminfo = (total: number, free: number, reserved: number) =>
  [
    'MemTotal:       24683748 kB',
    'AnonHugePages:         0 kB',
    `HugePages_Total:     ${total}`,
    `HugePages_Free:      ${free}`,
    `HugePages_Rsvd:      ${reserved}`,
    'HugePages_Surp:        0',
    'Hugepagesize:       2048 kB',
  ].join('\n');

describe('the PostgreSQL server’s memory in the bench report', () => {
  it('reads this host’s huge pages: reserved, and taken or promised to a process', () => {
    assert.deepEqual(hugePagesOf(meminfo(0, 0, 0)), { reservedMb: 0, takenMb: 0 });
    // PostgreSQL mapped 1 GB of shared buffers and more (537 pages), and has touched 25 of them.
    assert.deepEqual(hugePagesOf(meminfo(600, 575, 512)), { reservedMb: 1200, takenMb: 1074 });
    assert.equal(hugePagesOf('MemTotal: 1 kB\n'), null);
  });

  it('tells a server on this host from one elsewhere', () => {
    assert.ok(isOnThisHost('postgres://postgres@127.0.0.1:5432/db'));
    assert.ok(isOnThisHost('postgres://postgres@localhost/db'));
    assert.ok(isOnThisHost('postgres://postgres@[::1]:5432/db'));
    assert.ok(isOnThisHost('postgres://postgres@x/db?host=/var/run/postgresql'));
    assert.ok(!isOnThisHost('postgres://postgres@db.internal:5432/db'));
    assert.ok(!isOnThisHost('postgres://postgres@10.0.0.5/db'));
  });

  it('says the settings, and this host’s huge pages when it knows them', () => {
    const settings = { sharedBuffers: '128MB', hugePages: 'try' };
    assert.equal(
      describeServerMemory({ ...settings, host: null }),
      'shared_buffers 128MB, huge_pages try',
    );
    assert.equal(
      describeServerMemory({ ...settings, host: { reservedMb: 0, takenMb: 0 } }),
      'shared_buffers 128MB, huge_pages try (this host: none reserved)',
    );
    assert.equal(
      describeServerMemory({ ...settings, host: { reservedMb: 1200, takenMb: 1074 } }),
      'shared_buffers 128MB, huge_pages try (this host: 1200 MB reserved, 1074 MB taken)',
    );
  });

  const postgres = testDialects().find((dialect) => dialect.name === 'postgres');
  it('asks a real server for its settings', { skip: postgres?.skip ?? false }, async () => {
    const url = process.env.TEST_DATABASE_URL as string;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const memory = await serverMemory(client, url);
      assert.match(memory.sharedBuffers, /^\d+(kB|MB|GB|TB)$/);
      assert.ok(['try', 'on', 'off'].includes(memory.hugePages), memory.hugePages);
      if (process.platform === 'linux' && isOnThisHost(url)) assert.notEqual(memory.host, null);
    } finally {
      await client.end();
    }
  });
});
