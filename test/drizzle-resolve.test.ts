/**
 * drizzle-orm's relative imports resolved without the package-scope look-up (src/cli/drizzle-resolve.ts):
 * the same URL and format as Node's own resolver for every one the service's entry points load, other
 * imports left alone, and the hook in place in a cqs process.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drizzleScopeUrl, resolveInScope } from '../src/cli/drizzle-resolve.ts';
import { runChild, traceCqsHelp } from './helpers/module-trace.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const MODULE = new URL('../src/cli/drizzle-resolve.ts', import.meta.url).href;
/** The drizzle-orm entry points the service imports. */
const ENTRIES = [
  'drizzle-orm',
  'drizzle-orm/pg-core',
  'drizzle-orm/node-postgres',
  'drizzle-orm/node-postgres/migrator',
];

describe('drizzle-orm resolve hook', () => {
  const tempDir = tempDirs();

  it('answers what Node resolves for every relative import of the entry points the service uses', () => {
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
        for (const entry of ${JSON.stringify(ENTRIES)}) await import(entry);
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

  // The bench and the tests start cli/main.ts, not bin/cqs.js: the hook must be registered there.
  it('resolves drizzle-orm’s relative imports in a cqs process', async () => {
    const seen = traceCqsHelp(
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
    );
    assert.ok(seen.filter((line) => line.startsWith('load ')).length >= 100, 'drizzle-orm was not loaded');
    assert.deepEqual(
      seen.filter((line) => line.startsWith('resolve ')).slice(0, 5),
      [],
      'relative imports of drizzle-orm reached the default resolver',
    );
  });
});
