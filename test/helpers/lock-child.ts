/**
 * A starter racing others for an embedded directory's lock: waits until the common start time (argv[3],
 * epoch ms), tries once, prints ACQUIRED or REFUSED, and holds what it got for argv[4] ms.
 */
import { acquireDirectoryLock } from '../../src/adapters/db/directory-lock.ts';

const [dir, at, hold] = [String(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
while (Date.now() < at) {
  // Busy: the starters must try within microseconds of each other, where a timer would spread them.
}
try {
  acquireDirectoryLock(dir);
  process.stdout.write('ACQUIRED\n');
  setTimeout(() => {}, hold);
} catch (error) {
  process.stdout.write(`REFUSED ${(error as Error).message}\n`);
}
