/** Where an installed npm package lives, its version, and the service's own cache beside it. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** An installed package, found as Node finds it from this file. */
export interface InstalledPackage {
  /** Its folder (the one holding its package.json). */
  dir: string;
  version: string;
  /** Its package.json's `type` (`module` for one ES module scope), if it names one. */
  type: string | undefined;
  /** `node_modules/.cache/call-quality-service` of the node_modules holding it: what `cqs prepare` makes. */
  cacheDir: string;
}

/**
 * The installed package `name`: the first `node_modules/<name>` up from this file. Not from resolving its
 * entry point, which a resolve hook may send elsewhere (src/cli/typebox-bundle.ts does).
 */
export function installedPackage(name: string): InstalledPackage {
  let at = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const nodeModules = join(at, 'node_modules');
    const dir = join(nodeModules, name);
    if (existsSync(join(dir, 'package.json'))) {
      const { version, type } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        version: string;
        type?: string;
      };
      return { dir, version, type, cacheDir: join(nodeModules, '.cache', 'call-quality-service') };
    }
    const parent = dirname(at);
    if (parent === at) throw new Error(`cannot find the installed package ${name}`);
    at = parent;
  }
}
