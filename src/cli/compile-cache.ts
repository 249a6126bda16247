/**
 * Fills Node's compile cache with every module of the service, so that no start needs Node's TypeScript
 * stripper (amaro, a WebAssembly build of swc: 13–20 MB resident for the life of the process, measured as
 * the idle and peak RSS of a first start after an install or a change of code). `npm install` runs it (`cqs prepare`),
 * and so does the bench before it measures.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileCacheDir, serveFlags } from './heap-flags.ts';

const SRC = fileURLToPath(new URL('..', import.meta.url));
// Entries that run when imported: the command line, and the hashing worker thread's own module.
const SKIP = new Set([join('cli', 'main.ts'), join('adapters', 'storage', 'md5-worker.ts')]);

/**
 * Imports every module under src (they do nothing when imported) in new Node processes that have the
 * compile cache on from their start (this one loaded many of them before it could turn it on), once with
 * the V8 flags of `cqs serve` on each database: V8 takes code cached only under the flags it was made with.
 * Returns how many modules each imported.
 */
export function fillCompileCache(env: NodeJS.ProcessEnv): number {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !SKIP.has(f))
    .sort()
    .map((f) => pathToFileURL(join(SRC, f)).href);
  // TypeBox resolved as `cqs` resolves it (cli/main.ts), so the cache holds the files a start loads.
  const bundle = pathToFileURL(join(SRC, 'cli', 'typebox-bundle.ts')).href;
  const importAll = `(await import(${JSON.stringify(bundle)})).useTypeboxBundle();
    for (const f of JSON.parse(process.argv[1])) await import(f);`;
  for (const databaseUrl of [undefined, 'postgres://']) {
    const flags = serveFlags(databaseUrl ? { DATABASE_URL: databaseUrl } : {});
    execFileSync(
      process.execPath,
      [...flags, '--input-type=module', '-e', importAll, JSON.stringify(files)],
      { env: { ...env, NODE_COMPILE_CACHE: compileCacheDir(env) }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  return files.length;
}
