import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DEMO_EMPLOYEES } from '../../src/demo/context.ts';
import { createDemoCompany } from '../../src/demo/demo.ts';
import { importFile } from '../../src/import/importer.ts';
import { withErrorTable } from '../../src/openapi.ts';
import { FileReceiptStore } from '../../src/receipts/fs-store.ts';
import { ERRORS } from '../../src/schemas/problems.ts';
import { useApi } from '../helpers/api.ts';
import { useDatabase, useTempDir } from '../helpers/databases.ts';
import { writeJpeg } from '../helpers/records.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The repository's own documents: what a reader of a fresh clone has. */
const DOCUMENTS = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsIn(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] as string)));
}

describe('the documentation', () => {
  it('stands alone: every link stays in the repository and finds its file and heading', () => {
    const problems: string[] = [];
    for (const document of DOCUMENTS) {
      const text = readFileSync(join(ROOT, document), 'utf8');
      if (/\.\.\/shared|SEED-SPEC|PRODUCT\.md/.test(text)) {
        problems.push(`${document} refers to a file outside the repository`);
      }
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?|mailto):/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? join(ROOT, document) : resolve(ROOT, dirname(document), path);
        if (relative(ROOT, file).startsWith('..')) {
          problems.push(`${document}: ${target} leaves the repository`);
        } else if (!existsSync(file)) {
          problems.push(`${document}: ${target} does not exist`);
        } else if (anchor && file.endsWith('.md') && !anchorsIn(file).has(anchor)) {
          problems.push(`${document}: ${target} names no heading`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('is what code comments refer to: no source file names a document outside the repository', () => {
    const outside = /\.\.\/shared|SEED-SPEC|PRODUCT\.md/;
    const thisFile = fileURLToPath(import.meta.url);
    // Installed packages are not ours: the peer part of the benchmark installs its own under
    // bench/peer/node_modules.
    const sources = ['src', 'test', 'bench', 'client/src', '.ci'].flatMap((folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name))
        .filter((file) => !relative(ROOT, file).split(sep).includes('node_modules')),
    );
    assert.ok(sources.length > 100, `read ${sources.length} source files`);
    const naming = sources.filter(
      (file) => file !== thisFile && outside.test(readFileSync(file, 'utf8')),
    );
    assert.deepEqual(
      naming.map((file) => relative(ROOT, file)),
      [],
    );
  });

  it('lists every error code as the registry says (docs/api.md: run `npm run openapi`)', () => {
    const guide = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    assert.equal(guide, withErrorTable(guide), 'the error table differs: run `npm run openapi`');
    for (const code of Object.keys(ERRORS)) assert.match(guide, new RegExp(`\\| \`${code}\` \\|`));
  });

  it('has curl lines in the README that answer on the company `npm start` makes, on the first try', async (t) => {
    const api = await useApi(t, 'sqlite');
    const demo = await createDemoCompany(api.handle, new FileReceiptStore(api.config.receiptsDir), {
      employees: DEFAULT_DEMO_EMPLOYEES,
    });
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // The lines' dates are the day `SINCE` names (90 days back), whenever they are run.
    assert.match(readme, /^ {4}SINCE=\$\(date -u -d '90 days ago' \+%F /m);
    const since = new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10);
    const paths = [...readme.matchAll(/^ {4}curl .*Bearer \$KEY" "?\$B(\/[^\s"]+)/gm)].map((m) =>
      (m[1] as string).replaceAll(/\$\{SINCE\}|\$SINCE/g, since),
    );
    assert.ok(paths.length >= 10, `the README's curl lines: ${paths.join(' ')}`);
    for (const path of paths) {
      const res = await api.get(path, demo.key);
      assert.equal(res.status, path.includes('/receipt') ? 302 : 200, `${path}: ${res.body}`);
      // A list the reader is shown answers with records, not an empty page.
      const body = res.status === 200 ? (JSON.parse(res.body) as { data?: unknown }) : {};
      if (Array.isArray(body.data)) assert.ok(body.data.length > 0, `${path}: no records`);
    }
  });

  it('has an import example that imports as it is beside a demo company, replacing none of it', async (t) => {
    const { handle } = await useDatabase(t, 'sqlite');
    const dir = useTempDir(t);
    const store = new FileReceiptStore(join(dir, 'store'));
    const demo = await createDemoCompany(handle, store, { employees: 5 });
    const countRows = async () => {
      const tables = ['companies', 'employees', 'leave_types', 'leaves', 'expenses'] as const;
      const counts: Record<string, unknown> = {};
      for (const table of tables) {
        counts[table] = (
          await handle.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(table === 'companies' ? 'id' : 'company_id', '=', demo.companyId)
            .executeTakeFirstOrThrow()
        ).n;
      }
      return counts;
    };
    const before = await countRows();

    const guide = readFileSync(join(ROOT, 'docs/import-format.md'), 'utf8');
    const example = /```\n(\{"type":"company"[\s\S]*?)```/.exec(guide)?.[1];
    assert.ok(example, 'the example block');
    writeFileSync(join(dir, 'example.ndjson'), example);
    mkdirSync(join(dir, 'receipts'));
    await writeJpeg(join(dir, 'receipts'), '500.jpg');
    const summary = await importFile(handle, store, join(dir, 'example.ndjson'));
    assert.equal(summary.records, 6);
    assert.equal(summary.receipts, 1);

    assert.deepEqual(await countRows(), before, 'the demo company is as it was');
    const imported = await handle.db
      .selectFrom('expenses')
      .select(['id', 'company_id'])
      .where('company_id', '!=', demo.companyId)
      .execute();
    assert.deepEqual(imported, [{ id: 9_000_000_500, company_id: 9_000_000_001 }]);
  });
});
