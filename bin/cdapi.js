#!/usr/bin/env node
// Runs the TypeScript sources, so a fresh clone needs no build step: on a Node that strips types
// itself (22.18 and later, 24) directly, else through tsx. Node strips no types under
// node_modules, so a copy installed there goes through tsx too. A production image can run
// `node dist/cli/main.js` after `npm run build` instead.
import module from 'node:module';

// Node's compile cache (in the system's temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it
// off) keeps the stripped sources and V8's code between runs, checked against each file's
// content: `cdapi --help` 0.85 s -> 0.2 s, the CLI test suite 51 -> 30 s of CPU.
module.enableCompileCache?.();
if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../src/cli/main.ts');
