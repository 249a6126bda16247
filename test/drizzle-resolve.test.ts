/**
 * drizzle-orm's relative imports resolved without the package-scope look-up (src/cli/drizzle-resolve.ts):
 * the same URL and format as Node's own resolver for every one the service's entry points load, other
 * imports left alone, and the hook in place in a cqs process.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { drizzleScopeUrl, resolveInScope } from '../src/cli/drizzle-resolve.ts';
import { runChild, traceCqsHelp } from './helpers/module-trace.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const MODULE = new URL('../src/cli/drizzle-resolve.ts', import.meta.url).href;
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** The drizzle-orm entry points the service imports, statically or lazily (the embedded driver), from src. */
function serviceEntries(): string[] {
  const found = new Set<string>();
  for (const file of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\()'(drizzle-orm(?:\/[\w/-]+)?)'/g))
      found.add(m[1] as string);
  }
  return [...found].sort();
}

describe('drizzle-orm resolve hook', () => {
  const tempDir = tempDirs();

  it('answers what Node resolves for every relative import of the entry points the service uses', () => {
    const entries = serviceEntries();
    // Both drivers: the PostgreSQL one imported at start, the embedded one imported when it is opened.
    for (const entry of ['drizzle-orm', 'drizzle-orm/node-postgres', 'drizzle-orm/pglite']) {
      assert.ok(entries.includes(entry), `${entry} among ${entries.join(', ')}`);
    }
    // A child with no hook of ours: each relative import is resolved the default way and compared.
    const result = runChild(`
        import { registerHooks } from 'node:module';
        const { drizzleScopeUrl, resolveInScope } = await import(${JSON.stringify(MODULE)});
        const scope = drizzleScopeUrl();
        let compared = 0;
        const mismatches = [];
        registerHooks({
          resolve(specifier, context, next) {
            const resolved = next(specifier, context);
            const ours = resolveInScope(specifier, context.parentURL, scope);
            if (ours !== undefined) {
              compared++;
              if (ours !== resolved.url || resolved.format !== 'module') {
                mismatches.push({ specifier, parent: context.parentURL, ours, node: resolved.url, format: resolved.format });
              }
            }
            return resolved;
          },
        });
        for (const entry of ${JSON.stringify(entries)}) await import(entry);
        process.stdout.write(JSON.stringify({ scope, compared, mismatches: mismatches.slice(0, 5) }));
      `) as { scope: string; compared: number; mismatches: unknown[] };
    assert.ok(result.scope?.endsWith('/node_modules/drizzle-orm/'), result.scope);
    assert.ok(result.compared >= 100, `only ${result.compared} relative imports compared`);
    assert.deepEqual(result.mismatches, []);
  });

  it('leaves every other import to the default resolver', () => {
    const scope = drizzleScopeUrl();
    assert.ok(scope);
    const inside = `${scope}pg-core/index.js`;
    assert.equal(resolveInScope('./table.js', inside, scope), `${scope}pg-core/table.js`);
    assert.equal(resolveInScope('../sql/sql.js', inside, scope), `${scope}sql/sql.js`);
    // Bare specifiers, other extensions, parents outside the package, and paths leaving it.
    assert.equal(resolveInScope('pg', inside, scope), undefined);
    assert.equal(resolveInScope('drizzle-orm/pg-core', inside, scope), undefined);
    assert.equal(resolveInScope('./data.json', inside, scope), undefined);
    assert.equal(resolveInScope('./table', inside, scope), undefined);
    assert.equal(resolveInScope('./table.js', 'file:///srv/app/src/db.ts', scope), undefined);
    assert.equal(resolveInScope('./table.js', undefined, scope), undefined);
    assert.equal(resolveInScope('../../pg/lib/index.js', inside, scope), undefined);
  });

  /** What a cqs process with `args` resolves from drizzle-orm's relative imports, and loads of it. */
  const traceDrizzle = async (args?: string[]) =>
    traceCqsHelp(
      await tempDir('cqs-drizzle-resolve-'),
      `{
        resolve(specifier, context, next) {
          if (context.parentURL?.includes('/node_modules/drizzle-orm/') && specifier.startsWith('.')) {
            log('resolve ' + specifier);
          }
          return next(specifier, context);
        },
        load(url, context, next) {
          if (url.includes('/node_modules/drizzle-orm/')) log('load ' + url);
          return next(url, context);
        },
      }`,
      args,
    );

  // The bench and the tests start cli/main.ts, not bin/cqs.js: the hook must be registered there.
  it('resolves drizzle-orm’s relative imports in a cqs process', async () => {
    const seen = await traceDrizzle();
    assert.ok(seen.filter((line) => line.startsWith('load ')).length >= 100, 'drizzle-orm was not loaded');
    assert.deepEqual(
      seen.filter((line) => line.startsWith('resolve ')).slice(0, 5),
      [],
      'relative imports of drizzle-orm reached the default resolver',
    );
  });

  // Those commands skip the hook (and its parse of drizzle-orm's package.json) on this ground.
  it('loads no drizzle-orm module in a client-only command', async () => {
    assert.deepEqual(await traceDrizzle(['calls', '--help']), []);
  });
});
