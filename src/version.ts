import { readFileSync } from 'node:fs';

/** The package's version, read from package.json (the same path from src/ and from dist/). */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
