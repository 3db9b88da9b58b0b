import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateOpenApiDocument, renderOpenApiDocument, withErrorTable } from '../src/openapi.ts';

/**
 * `npm run openapi`: regenerates openapi.json at the repository root from the route schemas,
 * and the error table of docs/api.md from the error registry. The committed files are checked
 * against the generated ones by test/openapi/document.test.ts and test/docs/docs.test.ts.
 */
const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
writeFileSync(target, renderOpenApiDocument(await generateOpenApiDocument()));
console.log(`wrote ${target}`);

const guide = fileURLToPath(new URL('../docs/api.md', import.meta.url));
writeFileSync(guide, withErrorTable(readFileSync(guide, 'utf8')));
console.log(`wrote the error table of ${guide}`);
