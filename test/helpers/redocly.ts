import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `redocly lint` on an OpenAPI document with the repository's redocly.yaml (the
 * recommended rules) and asserts that it reports no error and no warning.
 */
export function assertRedoclyClean(file: string): void {
  const run = spawnSync(
    `${ROOT}node_modules/.bin/redocly`,
    ['lint', file, '--format=json', '--config', `${ROOT}redocly.yaml`],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  assert.equal(run.error, undefined);
  const report = JSON.parse(run.stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  const problems = report.problems.map(
    (p) => `${p.ruleId} at ${p.location.map((l) => l.pointer).join(', ')}: ${p.message}`,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
  assert.equal(run.status, 0, run.stderr);
}
