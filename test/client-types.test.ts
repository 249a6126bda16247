/** The committed client types are what openapi-typescript makes of the served OpenAPI document. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { GENERATED_TYPES, renderClientTypes } from '../scripts/client-types.ts';

it('packages/client/src/generated/openapi.ts matches the served document (npm run client:types)', async () => {
  const committed = await readFile(GENERATED_TYPES, 'utf8');
  assert.ok(committed === (await renderClientTypes()), 'stale client types: run `npm run client:types`');
});
