import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { formatImportSteps, importSteps } from '../../bench/harness/import-steps.ts';
import { ImportProgressReporter } from '../../src/cli/progress.ts';

/** A progress line as `cdapi import --json` writes it, with the fields the steps read. */
const line = (elapsed: number, stage: string, step?: string, table?: string) =>
  JSON.stringify({
    progress: {
      file: 'large.ndjson',
      records: 2552515,
      elapsed_seconds: elapsed,
      stage,
      ...(step && { step }),
      ...(table && { table }),
    },
  });

describe("a timed import's steps, from its progress lines", () => {
  it('times each part from its start to the next, and the process outside the import', () => {
    const stderr = [
      line(10, 'reading'),
      line(20, 'reading'),
      line(21.8, 'committing'),
      line(21.83, 'committing', 'indexes', 'leaves'),
      line(28, 'committing', 'search', 'expenses'),
      line(31.6, 'committing', 'indexes', 'expenses'),
      line(40, 'committing', 'indexes', 'expenses'),
      line(40.7, 'committing', 'commit'),
      line(41.3, 'committing', 'samples'),
      line(48.2, 'done'),
      // What else the command may write there is not a step.
      'cdapi: a warning',
      '{"progress":',
    ].join('\n');
    const steps = importSteps(stderr, 50);
    assert.deepEqual(
      steps.map((step) => [step.name, Number(step.seconds.toFixed(2))]),
      [
        ['reading', 21.8],
        ['committing', 0.03],
        ['indexes leaves', 6.17],
        ['search expenses', 3.6],
        ['indexes expenses', 9.1],
        ['commit', 0.6],
        ['samples', 6.9],
        ['start-up and close', 1.8],
      ],
    );
    assert.equal(
      formatImportSteps(steps),
      'reading 21.8, indexes leaves 6.2, search expenses 3.6, indexes expenses 9.1, commit 0.6, samples 6.9, start-up and close 1.8',
    );
  });

  it('has none for an import that wrote no progress or never said it was done', () => {
    assert.deepEqual(importSteps('', 3), []);
    assert.deepEqual(importSteps([line(10, 'reading'), line(12, 'committing')].join('\n'), 13), []);
  });

  it('reads the lines the CLI’s reporter writes', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (chunk: Buffer) => {
      written += chunk.toString();
    });
    const reporter = new ImportProgressReporter({ file: 'f.ndjson', out, json: true, everyMs: 0 });
    reporter.update({ bytesRead: 10, totalBytes: 20, records: 1 });
    reporter.update({ bytesRead: 20, totalBytes: 20, records: 2 });
    reporter.startStep({ name: 'indexes', table: 'leaves' });
    reporter.startStep({ name: 'samples' });
    reporter.done();
    reporter.end();
    const steps = importSteps(written, 60);
    assert.deepEqual(
      steps.map((step) => step.name),
      ['reading', 'committing', 'indexes leaves', 'samples', 'start-up and close'],
    );
    // The parts add up to the process's time.
    const total = steps.reduce((sum, step) => sum + step.seconds, 0);
    assert.ok(Math.abs(total - 60) < 1e-9, String(total));
  });
});
