import assert from 'node:assert/strict';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeDirectory, makeDirectorySync } from '../src/directories.ts';
import { useTempDir } from './helpers/databases.ts';

const isFolder = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory();

describe('making folders', () => {
  for (const [name, make] of [
    ['makeDirectory', makeDirectory],
    ['makeDirectorySync', async (path: string) => makeDirectorySync(path)],
  ] as const) {
    it(`${name} makes the missing folders, and leaves existing ones be`, async (t) => {
      const dir = useTempDir(t);
      await make(join(dir, 'a', 'b', 'c'));
      assert.ok(isFolder(join(dir, 'a', 'b', 'c')));
      writeFileSync(join(dir, 'a', 'kept'), 'x');
      await make(join(dir, 'a', 'b'));
      await make(dir);
      assert.ok(isFolder(join(dir, 'a', 'b', 'c')));
      assert.ok(statSync(join(dir, 'a', 'kept')).isFile());
    });

    it(`${name} refuses a file or a dangling link in the way`, async (t) => {
      const dir = useTempDir(t);
      writeFileSync(join(dir, 'file'), 'x');
      await assert.rejects(make(join(dir, 'file', 'sub')), { code: 'ENOTDIR' });
      await assert.rejects(make(join(dir, 'file')), { code: 'EEXIST' });
      symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
      await assert.rejects(make(join(dir, 'dangling', 'sub')), { code: 'EEXIST' });
      mkdirSync(join(dir, 'real'));
      symlinkSync(join(dir, 'real'), join(dir, 'link'));
      await make(join(dir, 'link', 'sub'));
      assert.ok(isFolder(join(dir, 'real', 'sub')), 'a link to a folder is followed');
    });
  }

  // Node's own recursive mkdir never returns here: /proc refuses the child with ENOENT, so it
  // makes the parent and tries again for ever. (The synchronous one would block this process;
  // test/cli/usage.test.ts runs it in a child with a timeout.)
  it('makeDirectory fails at once under /proc', {
    skip: process.platform !== 'linux' && 'no /proc on this system',
    timeout: 10_000,
  }, async () => {
    await assert.rejects(makeDirectory('/proc/cdapi-test/a/b'), {
      code: 'ENOENT',
      message: "ENOENT: no such file or directory, mkdir '/proc/cdapi-test'",
    });
  });
});
