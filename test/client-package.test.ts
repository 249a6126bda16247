/** @cqs/client stays installable on its own and browser-safe: no runtime dependencies, no Node imports. */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { it } from 'node:test';

/** The files of the `@cqs/client/node` entry, the only ones that may use Node modules. */
const NODE_ONLY = ['node.ts', 'node-put.ts', 'download.ts'];
const dir = new URL('../packages/client/', import.meta.url);

it('has no runtime dependencies', async () => {
  const pkg = JSON.parse(await readFile(new URL('package.json', dir), 'utf8'));
  assert.deepEqual(pkg.dependencies ?? {}, {});
  assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './node']);
});

it('imports Node modules only in the node entry', async () => {
  const src = new URL('src/', dir);
  for (const name of await readdir(src)) {
    if (!name.endsWith('.ts') || NODE_ONLY.includes(name)) continue;
    const text = await readFile(new URL(name, src), 'utf8');
    assert.doesNotMatch(text, /from '(node:|fs|path|stream)/, `${name} imports a Node module`);
    assert.doesNotMatch(text, /from '\.\/node(-put)?\.ts'/, `${name} imports the node entry`);
    assert.doesNotMatch(text, /\b(process|Buffer)\./, `${name} uses a Node global`);
  }
});
