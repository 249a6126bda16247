/** Processes of this host, by id. */

/** True when a process with this id runs on this host (one this process may not signal runs too). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
