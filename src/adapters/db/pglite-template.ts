/**
 * The archive of an empty embedded database that a first start loads instead of running initdb.
 *
 * PGlite creates a new data directory by running initdb in a second PGlite instance with its own
 * WebAssembly memory, beside the first: a first start peaked at about 1 GB resident (VmHWM), and WebAssembly
 * memory never shrinks. Loading a dump of a freshly created directory (PGlite's `loadDataDir`, made by its
 * own `dumpDataDir`) runs one instance and peaked at about 300 MB. `npm install` makes the archive once
 * (`cqs embedded-template`, the package's postinstall); without it a first start runs initdb as before.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { installedPackage } from '../installed-package.ts';

/** The file a first start keeps in the data directory until its new database is whole (`beginOpen`). */
const FIRST_START_MARK = 'cqs-first-start';

/** Files a new data directory may hold before PGlite opens it (the directory lock, the first start's mark). */
const FILES_BEFORE_OPEN = new Set(['cqs.lock', FIRST_START_MARK]);

/**
 * Prepares `dir`, locked, for PGlite to open; call `done` once it has opened. A directory holding nothing is a
 * first start: it is marked until then. One whose mark is still there held a first start cut short (killed
 * while it loaded the archive or ran initdb): what that start left is no database, and every later start
 * failed ("PGlite failed to initialize properly") until someone deleted it; it is removed, and made anew.
 * A directory without the mark (opened before, or made before the mark existed) is left as it is.
 */
export function beginOpen(dir: string): { done(): void } {
  const mark = join(dir, FIRST_START_MARK);
  if (existsSync(mark)) {
    for (const name of readdirSync(dir)) {
      if (!FILES_BEFORE_OPEN.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
  if (!readdirSync(dir).every((name) => FILES_BEFORE_OPEN.has(name))) return { done() {} };
  writeFileSync(mark, '');
  return {
    done() {
      rmSync(mark, { force: true });
    },
  };
}

/**
 * Where the archive for the installed PGlite lives: in its node_modules, named by its version, so a PGlite
 * upgrade (a new data-directory format) never loads an older archive, and a fresh install makes a new one.
 */
export function templatePath(): string {
  const { version, cacheDir } = installedPackage('@electric-sql/pglite');
  return join(cacheDir, `pglite-${version}-empty.tar.gz`);
}

/** The archive to load into `dir`, when `dir` holds no database yet and the archive exists. */
export function templateFor(dir: string): Blob | undefined {
  const path = templatePath();
  if (!existsSync(path)) return undefined;
  const present = readdirSync(dir).filter((name) => !FILES_BEFORE_OPEN.has(name));
  if (present.length > 0) return undefined;
  return new Blob([readFileSync(path)]);
}

/**
 * Makes the archive (when it is missing or `force`): creates a database in a temporary directory the way a
 * first start would, and stores PGlite's dump of it. Returns the archive's path.
 */
export async function makeTemplate(
  create: (dir: string, options: PGliteOptions) => Promise<PGlite>,
  options: PGliteOptions,
  force = false,
): Promise<string> {
  const path = templatePath();
  if (existsSync(path) && !force) return path;
  const work = join(tmpdir(), `cqs-pglite-template-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  try {
    const client = await create(work, options);
    let archive: Blob | File;
    try {
      archive = await client.dumpDataDir('gzip');
    } finally {
      await client.close();
    }
    mkdirSync(dirname(path), { recursive: true });
    // Written beside and renamed, so a process never loads half an archive.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await archive.arrayBuffer()));
    renameSync(partial, path);
    return path;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
