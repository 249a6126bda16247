/**
 * Temporary work files (a recording spooled for ffmpeg to seek in, a transcription's decoded channels) live
 * in directories named for the process that made them, `<tmpdir>/cqs-work-<pid>-<what>-<random>`. A
 * process removes its own files when a job ends, but one killed meanwhile (out of memory, a deploy's
 * SIGKILL) cannot: 185 MB of a decode were left behind by one kill. The worker removes, when it starts, the
 * directories of processes that are gone.
 */
import { mkdtemp, readdir, rm, stat, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from './processes.ts';

const PREFIX = 'cqs-work-';

/** A new directory for one job's temporary files (`name` says what for), named for this process. */
export function makeWorkDir(name: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-${name}-`));
}

/** Space kept free beside a job's files, for everything else on the same disk. */
const RESERVE_BYTES = 256 * 1024 * 1024;

/** There is not room for a job's files now; a later attempt may find it. */
export class NoRoomError extends Error {
  override name = 'NoRoomError';
}

/** Throws NoRoomError unless `bytes` (for `what`) fit in `dir`'s file system with RESERVE_BYTES to spare. */
export async function requireFreeSpace(dir: string, bytes: number, what: string): Promise<void> {
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (bytes + RESERVE_BYTES > free) {
    const mb = (n: number) => `${Math.ceil(n / 1e6)} MB`;
    throw new NoRoomError(
      `not enough room in the temporary folder for ${what}: ${mb(bytes)} needed with ${mb(RESERVE_BYTES)} to spare, ${mb(free)} free`,
    );
  }
}

/**
 * Removes the work directories of processes that no longer run, and those with this process's id made
 * before it started (a crashed process's that had the same id, as pid 1 in a container); how many.
 */
export async function removeOrphanedWorkDirs(): Promise<number> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  const started = Date.now() - process.uptime() * 1000;
  let removed = 0;
  for (const entry of entries) {
    const pid = Number(/^cqs-work-(\d+)-/.exec(entry)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const path = join(tmpdir(), entry);
    if (pid === process.pid) {
      // This process's own may be in use by a job that began meanwhile.
      const made = await stat(path).then(
        (s) => s.mtimeMs,
        () => Number.POSITIVE_INFINITY,
      );
      if (made >= started) continue;
    } else if (isAlive(pid)) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
