#!/usr/bin/env node
// Runs the TypeScript sources, so a fresh clone needs no build step: on a Node that strips types
// itself (22.18 and later, 24) directly, else through tsx. Node strips no types under
// node_modules, so a copy installed there goes through tsx too. A production image can run
// `node dist/cli/main.js` after `npm run build` instead.
if (!process.features.typescript || import.meta.url.includes('/node_modules/')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../src/cli/main.ts');
