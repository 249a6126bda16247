/**
 * A job's temporary files (a recording spooled for ffmpeg, a transcription's decoded channels) outlived a
 * worker killed in the middle (185 MB of one decode). They are named for their process now, and a worker
 * that starts removes those of processes that are gone; a live process's stay.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { makeWorkDir, removeOrphanedWorkDirs } from '../src/adapters/work-dir.ts';

const WORK_DIR = new URL('../src/adapters/work-dir.ts', import.meta.url).href;

it('removes the work files of a process killed in a job, and keeps a live one’s', async () => {
  // A temporary folder of this test's own (os.tmpdir() reads TMPDIR each time).
  const folder = await mkdtemp(join(tmpdir(), 'cqs-work-test-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = folder;
  // A worker in the middle of a decode: its work directory holds 8 MB, then it is killed.
  const script = `
    const { makeWorkDir } = await import(${JSON.stringify(WORK_DIR)});
    const { writeFile } = await import('node:fs/promises');
    const dir = await makeWorkDir('decode');
    await writeFile(dir + '/input', Buffer.alloc(8 * 1024 * 1024));
    process.stdout.write('written\\n');
    setInterval(() => {}, 1000);`;
  const killed = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, TMPDIR: folder },
  });
  try {
    await new Promise<void>((resolve) => killed.stdout.once('data', () => resolve()));
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    const live = await makeWorkDir('transcribe');
    assert.equal((await readdir(folder)).length, 2);
    assert.equal(await removeOrphanedWorkDirs(), 1);
    assert.deepEqual(await readdir(folder), [live.slice(folder.length + 1)]);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    killed.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  }
});
