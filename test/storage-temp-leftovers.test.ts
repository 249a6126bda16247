/**
 * Regression of issue 18 (finding 9): a kill -9 in the middle of an upload left its `.part` file in
 * `objects-tmp` until a start 24 hours later. At start, temporary files that no live upload can own go:
 * those of this process id (a restarted container is pid 1 again) and of processes of this host that are
 * gone; a live process's file, another host's (a shared DATA_DIR) are left alone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createEmbeddedStorage } from '../src/adapters/storage/embedded.ts';
import { TEMP_FILE_HOST, tempFileOwner } from '../src/adapters/storage/embedded-writer.ts';

describe('embedded storage temporary files at start', () => {
  it('removes the leftovers of crashed processes and keeps those of live ones', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cqs-leftovers-'));
    const tmp = join(dataDir, 'objects-tmp');
    await mkdir(tmp, { recursive: true });
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const name = (owner: string) => `${owner}.${randomUUID()}.part`;
      const files = {
        ownPid: name(tempFileOwner()),
        deadPid: name(`${TEMP_FILE_HOST}.${dead.pid}`),
        livePid: name(`${TEMP_FILE_HOST}.${live.pid}`),
        otherHost: name('another-host.4242'),
      };
      for (const f of Object.values(files)) await writeFile(join(tmp, f), Buffer.alloc(1024));
      createEmbeddedStorage({ dataDir, publicUrl: 'http://127.0.0.1', secret: 'x'.repeat(32) });
      assert.deepEqual((await readdir(tmp)).sort(), [files.livePid, files.otherHost].sort());
    } finally {
      live.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
