/** @cqs/client installs from its packed tarball into an empty project, offline, and imports from both entries. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { tempDirs } from './helpers/temp-dirs.ts';

const CLIENT = new URL('../packages/client', import.meta.url).pathname;
const NPM = 'npm'; // the npm on PATH, as a user runs it
const tempDir = tempDirs();

it('npm pack → npm install --offline into an empty project → import works', async () => {
  const packs = await tempDir('cqs-pack-');
  const project = await tempDir('cqs-consumer-');
  const npm = (args: string[], cwd: string) =>
    execFileSync(NPM, [...args, '--no-audit', '--no-fund'], { cwd, encoding: 'utf8', stdio: 'pipe' });
  npm(['pack', '--pack-destination', packs], CLIENT);
  const [tarball] = (await readdir(packs)).filter((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  npm(['install', '--offline', join(packs, tarball)], project);
  await writeFile(
    join(project, 'check.js'),
    `import { CqsClient, CqsError } from '@cqs/client';
import { CqsNodeClient, fileSource } from '@cqs/client/node';
const c = new CqsClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'x' });
console.log(JSON.stringify([typeof c.completeUpload, typeof CqsError, typeof CqsNodeClient, typeof fileSource]));`,
  );
  const out = execFileSync(process.execPath, ['check.js'], { cwd: project, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), ['function', 'function', 'function', 'function']);
});
