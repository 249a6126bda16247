/**
 * The embedded directory's lock (src/adapters/db/directory-lock.ts): a lock left by a process that is gone is
 * taken over at once, including one that names this very pid (a container restarted after a crash usually
 * gets the pid it had, and was refused until someone deleted the file); a lock this process holds is not;
 * and of starters racing for a stale lock exactly one wins (the takeover was read, unlink, create, and one
 * starter could unlink the lock another had just made: both held it in 3 of 10 rounds of three).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { acquireDirectoryLock, DirectoryLockedError } from '../src/adapters/db/directory-lock.ts';

const run = promisify(execFile);

/** A pid no process of this host has now: one that just exited. */
async function deadPid(): Promise<number> {
  const { stdout } = await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(stdout);
}

describe('the embedded directory lock', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'cqs-lock-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  const leftBy = async (dir: string, pid: number) => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cqs.lock'), JSON.stringify({ pid, host: hostname(), since: 'then' }));
  };

  it('takes over a lock naming its own pid that it does not hold, and refuses one it holds', async () => {
    const dir = join(root, 'same-pid');
    await leftBy(dir, process.pid);
    const lock = acquireDirectoryLock(dir);
    assert.equal(JSON.parse(await readFile(join(dir, 'cqs.lock'), 'utf8')).since === 'then', false);
    assert.throws(() => acquireDirectoryLock(dir), DirectoryLockedError);
    lock.release();
    acquireDirectoryLock(dir).release();
  });

  it('takes over a lock of a process that is gone, and one that names no owner', async () => {
    const gone = join(root, 'gone');
    await leftBy(gone, await deadPid());
    acquireDirectoryLock(gone).release();
    const garbled = join(root, 'garbled');
    await mkdir(garbled);
    await writeFile(join(garbled, 'cqs.lock'), '{"pi');
    acquireDirectoryLock(garbled).release();
  });

  it('lets exactly one of three starters racing for a stale lock hold it, round after round', async () => {
    const child = join(import.meta.dirname, 'helpers', 'lock-child.ts');
    const rounds: string[][] = [];
    for (let round = 0; round < 12; round++) {
      const dir = join(root, `race-${round}`);
      await leftBy(dir, await deadPid());
      const at = String(Date.now() + 700);
      const outcomes = await Promise.all(
        [0, 1, 2].map(async () => (await run(process.execPath, [child, dir, at, '300'])).stdout.trim()),
      );
      rounds.push(outcomes.map((line) => line.split(' ')[0] as string));
    }
    const holders = rounds.map((round) => round.filter((outcome) => outcome === 'ACQUIRED').length);
    assert.deepEqual(holders, Array(12).fill(1), JSON.stringify(rounds));
  });
});
