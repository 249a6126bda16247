/**
 * One process at a time on an embedded database directory. PGlite takes no lock of its own, and two
 * processes on one directory silently lose writes. A PID file is used rather than a time-based lock
 * (such as proper-lockfile's), so a process restarted right after a crash or SIGKILL can take over at
 * once instead of waiting for the old lock to go stale.
 *
 * The lock file is made whole (written beside, then hard-linked into place, which fails if it exists), so
 * it is never seen empty. A stale lock is taken over under a second, short-lived lock file, so that two
 * processes starting together cannot both remove it and each make their own.
 */
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../processes.ts';

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

/** Lock files this process holds now: the same pid in a file not among them is a former process's. */
const held = new Set<string>();

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function ownerOf(text: string | undefined): Owner | undefined {
  if (text === undefined) return undefined;
  try {
    const owner = JSON.parse(text) as Partial<Owner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? (owner as Owner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when the file's owner is gone: a process of this host that no longer runs, or this process's own id
 * in a file it does not hold (a container restarted after a crash often gets the pid it had). A file that
 * names no owner (cut short, or not ours) is stale too.
 */
function isStale(path: string, owner: Owner | undefined): boolean {
  if (owner === undefined) return true;
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return !held.has(path);
  return !isAlive(owner.pid);
}

/** Makes `path` holding `text`, whole, unless it exists; true when this call made it. */
function createWhole(path: string, text: string): boolean {
  const partial = `${path}.${process.pid}.partial`;
  const fd = openSync(partial, 'w');
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(partial, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(partial);
  }
}

/** Removes the lock file if it still holds `text` (the stale owner seen), under the takeover lock. */
function takeOver(path: string, text: string | undefined, me: string): 'removed' | 'busy' {
  const guard = `${path}.takeover`;
  if (!createWhole(guard, me)) {
    const guardText = readText(guard);
    // A starter that died mid-takeover leaves its guard: stale like any lock, removed for the next try.
    if (isStale(guard, ownerOf(guardText)) && readText(guard) === guardText) unlinkSync(guard);
    return 'busy';
  }
  try {
    if (readText(path) === text) unlinkSync(path);
    return 'removed';
  } finally {
    unlinkSync(guard);
  }
}

/** Takes the lock on `dir` or throws DirectoryLockedError naming the process that holds it. */
export function acquireDirectoryLock(dir: string): DirectoryLock {
  const path = join(dir, 'cqs.lock');
  const me: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const mine = JSON.stringify(me);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createWhole(path, mine)) {
      held.add(path);
      return {
        release() {
          held.delete(path);
          if (readText(path) === mine) unlinkSync(path);
        },
      };
    }
    const text = readText(path);
    const owner = ownerOf(text);
    if (text !== undefined && !isStale(path, owner)) {
      const who = owner as Owner;
      throw new DirectoryLockedError(
        `the embedded database in ${dir} is in use by process ${who.pid} on ${who.host} ` +
          `(since ${who.since}); stop that process, or give this one another DATA_DIR or a DATABASE_URL`,
      );
    }
    // The owner died without releasing (or the file is gone or unreadable): take over, then try again.
    if (text !== undefined) takeOver(path, text, mine);
  }
  throw new DirectoryLockedError(`could not lock ${dir}: another process is starting on it`);
}
