import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ImportProgressReporter } from '../../src/cli/progress.ts';

/** A reporter whose stderr is kept as text, with the whole (tiny) file read. */
function reporter(everyMs: number, json = false) {
  let text = '';
  const out = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk;
      callback();
    },
  });
  const progress = new ImportProgressReporter({
    file: 'export.ndjson',
    out,
    json,
    everyMs,
  });
  progress.update({ bytesRead: 1000, totalBytes: 1000, records: 10 });
  return { progress, lines: () => text.trimEnd().split('\n') };
}

describe('cdapi import progress: the steps after the last record', () => {
  it('says a step that runs on again at most once a second, however short the period', async () => {
    // --progress-every 0.001: a line per 64 KiB read, but not a thousand a second of one step.
    const { progress, lines } = reporter(1);
    progress.startStep({ name: 'samples' });
    await sleep(1500);
    progress.done();
    progress.end();
    const said = lines().filter((line) => line.startsWith('cdapi import: sampling the long lists'));
    // Said as it starts and again after a second; a late timer only says it fewer times.
    assert.ok(said.length >= 1 && said.length <= 2, `${said.length} lines: ${said.join('\n')}`);
    assert.match(lines().at(-1) ?? '', /, done in 0:0\d$/);
  });

  it('says each step once with --progress-every 0, and names the table of index steps in JSON', () => {
    const { progress, lines } = reporter(0, true);
    progress.startStep({ name: 'indexes', table: 'leaves' });
    progress.startStep({ name: 'commit' });
    progress.done();
    progress.end();
    const steps = lines()
      .map((line) => JSON.parse(line).progress)
      .filter((p) => p.step);
    assert.deepEqual(
      steps.map(({ stage, step, table }) => ({ stage, step, table })),
      [
        { stage: 'committing', step: 'indexes', table: 'leaves' },
        { stage: 'committing', step: 'commit', table: undefined },
      ],
    );
    assert.equal(JSON.parse(lines().at(-1) ?? '').progress.stage, 'done');
  });
});
