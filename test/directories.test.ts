import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeDirectorySync } from '../src/directories.ts';
import { useTempDir } from './helpers/databases.ts';

const isFolder = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory();

describe('making folders', () => {
  it('makes the missing folders, and leaves existing ones be', (t) => {
    const dir = useTempDir(t);
    makeDirectorySync(join(dir, 'a', 'b', 'c'));
    assert.ok(isFolder(join(dir, 'a', 'b', 'c')));
    writeFileSync(join(dir, 'a', 'kept'), 'x');
    makeDirectorySync(join(dir, 'a', 'b'));
    makeDirectorySync(dir);
    assert.ok(isFolder(join(dir, 'a', 'b', 'c')));
    assert.ok(statSync(join(dir, 'a', 'kept')).isFile());
  });

  it('refuses a file or a dangling link in the way', (t) => {
    const dir = useTempDir(t);
    writeFileSync(join(dir, 'file'), 'x');
    assert.throws(() => makeDirectorySync(join(dir, 'file', 'sub')), { code: 'ENOTDIR' });
    assert.throws(() => makeDirectorySync(join(dir, 'file')), { code: 'EEXIST' });
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    assert.throws(() => makeDirectorySync(join(dir, 'dangling', 'sub')), { code: 'EEXIST' });
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    makeDirectorySync(join(dir, 'link', 'sub'));
    assert.ok(isFolder(join(dir, 'real', 'sub')), 'a link to a folder is followed');
  });

  // Node's own recursive mkdir never returns here: /proc refuses the child with ENOENT, so it
  // makes the parent and tries again for ever. Run in a child with a timeout, as a regression
  // would block this process.
  it('fails at once under /proc', {
    skip: process.platform !== 'linux' && 'no /proc on this system',
  }, () => {
    const script = `
      import { makeDirectorySync } from ${JSON.stringify(new URL('../src/directories.ts', import.meta.url).href)};
      try { makeDirectorySync('/proc/cdapi-test/a/b'); }
      catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        encoding: 'utf8',
        timeout: 10_000,
      },
    );
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), {
      code: 'ENOENT',
      message: "ENOENT: no such file or directory, mkdir '/proc/cdapi-test'",
    });
  });
});
