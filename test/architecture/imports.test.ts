import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The layers of src/ point one way, and no module imports itself round a cycle. Read from the
 * source text: every `import … from`, `export … from` and `import()` of a relative path,
 * type-only ones included (a type import still ties a lower layer to a higher one).
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

/** Each file (relative to src/) and the src/ files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const targets: string[] = [];
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2];
      if (!specifier?.startsWith('.')) continue;
      targets.push(relative(SRC, resolve(dirname(file), specifier)));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** The folder a file belongs to under src/ (`db`, `http`, …), or `.` for src/ itself. */
const layerOf = (file: string): string => (file.includes('/') ? file.split('/')[0] : '.') as string;

/**
 * What each layer may not import. The HTTP and import sides both stand on resources/, db/ and
 * schemas/, and neither on the other; services/ (what the CLI and the admin API share) stands
 * on the import side and db/, admin/ (the admin listener) on services/ and the HTTP side, cli/
 * on services/; nothing below the app imports it.
 */
const FORBIDDEN: Record<string, readonly string[]> = {
  schemas: ['db', 'resources', 'import', 'http', 'services', 'admin', 'cli'],
  db: ['resources', 'import', 'http', 'services', 'admin', 'cli'],
  resources: ['import', 'http', 'services', 'admin', 'cli'],
  import: ['http', 'services', 'admin', 'cli'],
  http: ['import', 'services', 'admin', 'cli'],
  services: ['http', 'admin', 'cli'],
  admin: ['cli'],
};

describe('src imports', () => {
  const graph = importGraph();

  it('reads the import graph (a sanity check of the parser)', () => {
    assert.ok(graph.size > 50, `${graph.size} files`);
    assert.ok(graph.get('http/api.ts')?.includes('http/routes/index.ts'));
    assert.ok(graph.get('import/importer.ts')?.includes('resources/index.ts'));
  });

  it('point one way between schemas, db, resources, import and http', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const forbidden = FORBIDDEN[layerOf(file)] ?? [];
      for (const target of targets) {
        if (forbidden.includes(layerOf(target))) upward.push(`${file} → ${target}`);
      }
    }
    assert.deepEqual(upward, []);
  });

  it('import app.ts only from src/ itself (the server and the OpenAPI generator)', () => {
    const importers = [...graph]
      .filter(([, targets]) => targets.includes('app.ts'))
      .map(([file]) => file);
    assert.deepEqual(
      importers.filter((file) => layerOf(file) !== '.'),
      [],
    );
  });

  it('form no cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      path.push(file);
      for (const target of graph.get(file) ?? []) {
        if (state.get(target) === 'open') {
          cycles.push([...path.slice(path.indexOf(target)), target].join(' → '));
        } else if (!state.has(target)) {
          visit(target);
        }
      }
      path.pop();
      state.set(file, 'done');
    };
    for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
    assert.deepEqual(cycles, []);
  });
});

describe('src configuration', () => {
  it('is read from process.env by config.ts alone (and heap.ts, which passes it on whole)', () => {
    const readers = sourceFiles(SRC)
      .filter((file) => /\bprocess\.env\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file))
      .sort();
    assert.deepEqual(readers, ['config.ts', 'heap.ts']);
  });
});
