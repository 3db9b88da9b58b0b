import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateOpenApiDocument, renderOpenApiDocument } from '../src/openapi.ts';

/**
 * `npm run openapi`: regenerates openapi.json at the repository root from the route schemas.
 * The committed file is checked against the generated one by test/openapi/document.test.ts.
 */
const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
writeFileSync(target, renderOpenApiDocument(await generateOpenApiDocument()));
console.log(`wrote ${target}`);
