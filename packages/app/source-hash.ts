/**
 * The hash of the web app's sources (everything its build reads from this package: `src/`, `index.html`,
 * `vite.config.ts`, this file and `package.json`). The build writes it into `dist/` as SOURCE_HASH_FILE;
 * the service compares it with the sources at start, so that it never serves files older than the
 * sources (a `git pull` without `npm install` leaves the old build in place).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The file in `dist/` that holds the hash of the sources it was built from. */
export const SOURCE_HASH_FILE = '.source-hash';

const ROOT_FILES = ['index.html', 'vite.config.ts', 'source-hash.ts', 'package.json'];

/** The hash of the app's sources under `root` (the package's directory); null when they are not there. */
export function appSourceHash(root: string): string | null {
  if (!existsSync(join(root, 'src'))) return null;
  const files = [...ROOT_FILES.map((f) => join(root, f))];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk(join(root, 'src'));
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    if (!existsSync(file)) continue;
    // Each file's name and length before its bytes, so that moving bytes between files changes the hash.
    const body = readFileSync(file);
    hash.update(`${relative(root, file)}\0${body.length}\0`).update(body);
  }
  return hash.digest('hex');
}
