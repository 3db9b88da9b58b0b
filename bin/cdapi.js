#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so a fresh clone needs no build step.
// A production image can run `node dist/cli/main.js` after `npm run build` instead.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
