/**
 * One process at a time on an embedded database directory. PGlite takes no lock of its own, and two
 * processes on one directory silently lose writes. A PID file is used rather than a time-based lock
 * (such as proper-lockfile's), so a process restarted right after a crash or SIGKILL can take over at
 * once instead of waiting for the old lock to go stale.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** Thrown when another live process holds the directory. */
export class DirectoryLockedError extends Error {
  override name = 'DirectoryLockedError';
}

/** A held lock. */
export interface DirectoryLock {
  release(): void;
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

/** Takes the lock on `dir` or throws DirectoryLockedError naming the process that holds it. */
export function acquireDirectoryLock(dir: string): DirectoryLock {
  const path = join(dir, 'cqs.lock');
  const me: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      return {
        release() {
          const owner = readOwner(path);
          if (owner?.pid === me.pid && owner.host === me.host) unlinkSync(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(path);
      const stale = owner !== undefined && owner.host === me.host && !isAlive(owner.pid);
      if (!stale && owner !== undefined) {
        throw new DirectoryLockedError(
          `the embedded database in ${dir} is in use by process ${owner.pid} on ${owner.host} ` +
            `(since ${owner.since}); stop that process, or give this one another DATA_DIR or a DATABASE_URL`,
        );
      }
      // The owner died without releasing (or left an unreadable file): take over.
      unlinkSync(path);
    }
  }
  throw new DirectoryLockedError(`could not lock ${dir}: another process is starting on it`);
}
