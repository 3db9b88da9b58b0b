// The package's `prepare`: compiles src/ to dist/ with TypeScript, a devDependency. An install
// without devDependencies (`npm ci --omit=dev`, the service's production image, which does not
// use the client) has no TypeScript: it is said, and the install goes on. `npm pack` and
// `npm publish` stop instead: the package they would make has no code.
import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { createRequire } from 'node:module';

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  const packing = ['pack', 'publish'].includes(process.env.npm_command ?? '');
  console.warn(
    packing
      ? '@company-data-api/client: TypeScript is not installed, so dist/ cannot be built: run `npm install` at the repository root first'
      : '@company-data-api/client: TypeScript is not installed (devDependencies left out): dist/ not built',
  );
  process.exit(packing ? 1 : 0);
}
const built = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
chmodSync('dist/pull/cli.js', 0o755);
