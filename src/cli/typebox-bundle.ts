/**
 * TypeBox as one bundle. TypeBox 1.x ships as 683 small ES modules, and the service loads all of them:
 * each costs Node a module record, its source and its compiled code for the life of the process. Bundled
 * into its entry points and a few shared chunks (esbuild, at `cqs prepare`), the same code took 7 MB of
 * RSS to import where the modules took 29, and `cqs serve` on PostgreSQL idled 3-7 MB lower. `cli/main.ts`
 * resolves every `typebox` import to the bundle when one exists for the installed version, before any
 * module imports TypeBox, so the process holds one copy of it; without a bundle nothing changes.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { installedPackage } from '../adapters/installed-package.ts';

const PACKAGE = 'typebox';
/** The bundle's file for the package's main entry (`typebox` itself). */
const MAIN = 'index';

/** Where the bundle of the installed TypeBox lives: named by its version, so an upgrade never loads an old one. */
export function typeboxBundleDir(): string {
  const { version, cacheDir } = installedPackage(PACKAGE);
  return join(cacheDir, `${PACKAGE}-${version}`);
}

/**
 * The installed TypeBox's entry points (`.` and each exported subpath) with the package's own file of each,
 * read from its package.json: resolving `typebox` would go through the bundle once a process uses one.
 */
function entryPoints(): { entry: string; file: string }[] {
  const { dir } = installedPackage(PACKAGE);
  const { exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import?: string; default?: string }>;
  };
  return Object.entries(exports)
    .filter(([entry]) => !entry.includes('*') && !entry.endsWith('.json'))
    .map(([entry, target]) => {
      const file = typeof target === 'string' ? target : (target.import ?? target.default);
      if (!file) throw new Error(`TypeBox's entry point ${entry} names no ES module`);
      return { entry, file: join(dir, file) };
    });
}

/** The bundle file of an entry point (`.` → index, `./compile` → compile). */
const fileName = (entry: string) => `${entry === '.' ? MAIN : entry.slice(2)}.mjs`;

/**
 * Makes the bundle (when it is missing or `force`) into `dir`: one module per entry point, with what they
 * share in chunks, so state TypeBox keeps in a module exists once. Returns `dir`.
 */
export async function makeTypeboxBundle(dir = typeboxBundleDir(), force = false): Promise<string> {
  if (existsSync(dir) && !force) return dir;
  const { build } = await import('esbuild');
  const sources = join(tmpdir(), `cqs-typebox-entries-${process.pid}`);
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(sources, { recursive: true, force: true });
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(sources, { recursive: true });
  try {
    const entries: string[] = [];
    for (const { entry, file } of entryPoints()) {
      const target = JSON.stringify(file);
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const source = join(sources, fileName(entry));
      // `export *` leaves a default export out.
      const reexport = 'default' in module ? `export { default } from ${target};\n` : '';
      writeFileSync(source, `export * from ${target};\n${reexport}`);
      entries.push(source);
    }
    await build({
      entryPoints: entries,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      outdir: partial,
      entryNames: '[name]',
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    });
    // Renamed into place whole, so a process never loads half a bundle; a concurrent prepare's wins.
    if (force) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir);
    } catch (error) {
      if (!existsSync(dir)) throw error;
    }
    return dir;
  } finally {
    rmSync(sources, { recursive: true, force: true });
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * Resolves `typebox` and its subpaths to the bundle in `dir` from now on, in this process (imports and
 * requires alike). Returns false, changing nothing, when there is no bundle for the installed version.
 */
export function useTypeboxBundle(dir?: string): boolean {
  let bundle: string;
  try {
    bundle = dir ?? typeboxBundleDir();
  } catch {
    return false;
  }
  if (!existsSync(bundle)) return false;
  const urls = new Map<string, string>();
  for (const file of readdirSync(bundle)) {
    if (!file.endsWith('.mjs') || file.startsWith('chunk-')) continue;
    const name = file.slice(0, -'.mjs'.length);
    urls.set(name === MAIN ? PACKAGE : `${PACKAGE}/${name}`, pathToFileURL(join(bundle, file)).href);
  }
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = urls.get(specifier);
      return url ? { url, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
    },
  });
  return true;
}
