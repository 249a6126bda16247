/**
 * fileSource closes its file itself: after the last byte, and on a cancel, even one that arrives while the
 * file is still being opened. A handle left to the garbage collector prints DEP0137 (and leaks a descriptor
 * until a collection).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileSource } from '../packages/client/src/node.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** How many of this process's descriptors are open on `path` (Linux's /proc). */
async function openOn(path: string): Promise<number> {
  let count = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === path) count++;
  }
  return count;
}

/** Waits (up to 5 s) for every descriptor on `path` to be closed; the count left. */
async function settled(path: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    if ((await openOn(path)) === 0) return 0;
    await sleep(50);
  }
  return openOn(path);
}

describe('fileSource closes its file', { skip: process.platform !== 'linux' && 'needs /proc' }, () => {
  let dir: string;
  let path: string;
  const size = 600 * 1024;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-file-source-'));
    path = join(dir, 'call.wav');
    await writeFile(path, Buffer.alloc(size, 7));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('after the last byte, without a read past the end', async () => {
    const reader = (await fileSource(path)).open().getReader();
    let read = 0;
    while (read < size) {
      const { value } = await reader.read();
      read += value?.byteLength ?? 0;
    }
    assert.equal(read, size);
    assert.equal(await settled(path), 0);
  });

  it('on a cancel that arrives while the file is being opened', async () => {
    // As an upload that fails at once does: the PUT's body is piped, and cancelled before a byte is sent.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 20; i++) {
        const piped = (await fileSource(path)).open().pipeThrough(new TransformStream());
        for (let tick = 0; tick < i % 5; tick++) await Promise.resolve();
        await piped.cancel();
      }
      await sleep(200);
      // A handle nobody closed is closed by the collector, with a warning: collect now and look for one.
      collectGarbage();
      await sleep(200);
      assert.equal(await settled(path), 0);
      assert.deepEqual(
        warnings.filter((w) => /garbage collection/.test(w)),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('on a cancel half way', async () => {
    const reader = (await fileSource(path)).open().getReader();
    await reader.read();
    await reader.cancel();
    assert.equal(await settled(path), 0);
  });
});
