/**
 * The embedded storage's signing secret in DATA_DIR: two processes starting on one new directory agree on
 * one secret and neither ever reads it empty (it was created empty, then written: 35 empty secrets in 300
 * simultaneous starts), and a file holding no usable secret (what a crash left) stops the start instead of
 * signing, and accepting, URLs with an empty key.
 */
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { loadSigningSecret } from '../src/adapters/storage/embedded.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

describe('the embedded storage signing secret', () => {
  const makeDir = tempDirs();
  const newDir = () => makeDir('cqs-secret-');

  it('gives two processes starting on one new data directory the same whole secret', async () => {
    const fresh = await Promise.all(Array.from({ length: 100 }, newDir));
    const barrier = new SharedArrayBuffer(4 * fresh.length);
    const start = () =>
      new Promise<string[]>((resolve, reject) => {
        const worker = new Worker(new URL('./helpers/signing-secret-worker.ts', import.meta.url), {
          workerData: { dirs: fresh, barrier },
        });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    const [a, b] = await Promise.all([start(), start()]);
    for (let i = 0; i < fresh.length; i++) {
      assert.match(a[i] as string, /^[0-9a-f]{64}$/, `directory ${i}`);
      assert.equal(a[i], b[i], `directory ${i}`);
      assert.deepEqual(await readdir(fresh[i] as string), ['storage-secret'], 'no temporary file is left');
    }
  });

  it('refuses a secret file that holds no usable secret, and keeps a configured one first', async () => {
    const dir = await newDir();
    for (const content of ['', '\n', 'short\n']) {
      await writeFile(join(dir, 'storage-secret'), content);
      assert.throws(() => loadSigningSecret(dir, undefined), /holds no usable signing secret/);
    }
    const configured = 'c'.repeat(32);
    assert.equal(loadSigningSecret(dir, configured), configured);
  });
});
