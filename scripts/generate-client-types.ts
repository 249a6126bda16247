/** Writes packages/client/src/generated/openapi.ts from the app's OpenAPI document. */
import { writeFile } from 'node:fs/promises';
import { GENERATED_TYPES, renderClientTypes } from './client-types.ts';

await writeFile(GENERATED_TYPES, await renderClientTypes());
process.stdout.write(`wrote ${GENERATED_TYPES.pathname}\n`);
