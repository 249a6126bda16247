/**
 * TypeBox's bundle (`cqs prepare`, src/cli/typebox-bundle.ts): one module per entry point of the installed
 * package with the same exports, and `typebox` imports resolved to it only when it exists.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { installedPackage } from '../src/adapters/installed-package.ts';
import { makeTypeboxBundle } from '../src/cli/typebox-bundle.ts';
import { runChild, traceCqsHelp } from './helpers/module-trace.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const BUNDLE_MODULE = new URL('../src/cli/typebox-bundle.ts', import.meta.url).href;

/** The installed package's own file of each entry point, by specifier (`typebox`, `typebox/compile`, …). */
function packageFiles(): Map<string, string> {
  const { dir } = installedPackage('typebox');
  const { exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import?: string; default?: string }>;
  };
  const out = new Map<string, string>();
  for (const [key, target] of Object.entries(exports)) {
    if (key.includes('*') || key.endsWith('.json')) continue;
    const file = typeof target === 'string' ? target : (target.import ?? target.default);
    if (file)
      out.set(key === '.' ? 'typebox' : `typebox${key.slice(1)}`, pathToFileURL(join(dir, file)).href);
  }
  return out;
}

describe('TypeBox bundle', () => {
  const tempDir = tempDirs();

  it('has one module per entry point, each exporting what the package exports, and one copy of shared state', async () => {
    const dir = join(await tempDir('cqs-typebox-'), 'typebox-bundle');
    assert.equal(await makeTypeboxBundle(dir), dir);
    const files = packageFiles();
    const entries = readdirSync(dir).filter((f) => !f.startsWith('chunk-'));
    assert.equal(entries.length, files.size, entries.join(', '));
    const result = runChild(`
      const { useTypeboxBundle } = await import(${JSON.stringify(BUNDLE_MODULE)});
      const files = new Map(${JSON.stringify([...files])});
      const used = useTypeboxBundle(${JSON.stringify(dir)});
      const entries = {};
      for (const [specifier, own] of files) {
        const bundled = Object.keys(await import(specifier)).sort();
        entries[specifier] = {
          url: import.meta.resolve(specifier),
          same: JSON.stringify(bundled) === JSON.stringify(Object.keys(await import(own)).sort()),
          count: bundled.length,
        };
      }
      // A schema made through one entry point, checked through two others (shared modules, one copy).
      const { Type } = await import('typebox');
      const { Compile } = await import('typebox/compile');
      const { Value } = await import('typebox/value');
      const schema = Type.Object({ n: Type.Integer({ minimum: 1 }) });
      const validator = Compile(schema);
      const { createRequire } = await import('node:module');
      const required = createRequire(import.meta.url).resolve('typebox');
      process.stdout.write(JSON.stringify({
        used, entries, required,
        checks: [validator.Check({ n: 2 }), validator.Check({ n: 0 }), Value.Check(schema, { n: 'x' })],
      }));
    `) as {
      used: boolean;
      entries: Record<string, { url: string; same: boolean; count: number }>;
      required: string;
      checks: boolean[];
    };
    assert.equal(result.used, true);
    for (const [specifier, entry] of Object.entries(result.entries)) {
      assert.ok(entry.url.startsWith(pathToFileURL(dir).href), `${specifier} → ${entry.url}`);
      assert.ok(entry.same, `${specifier}: the bundle's exports differ from the package's`);
      assert.ok(entry.count > 0, specifier);
    }
    assert.ok(result.required.startsWith(dir), result.required);
    assert.deepEqual(result.checks, [true, false, false]);
  });

  it('changes nothing where there is no bundle', async () => {
    const missing = join(await tempDir('cqs-typebox-'), 'none');
    const result = runChild(`
      const { useTypeboxBundle } = await import(${JSON.stringify(BUNDLE_MODULE)});
      const used = useTypeboxBundle(${JSON.stringify(missing)});
      process.stdout.write(JSON.stringify({ used, url: import.meta.resolve('typebox') }));
    `) as { used: boolean; url: string };
    assert.equal(result.used, false);
    assert.equal(result.url, packageFiles().get('typebox'));
  });

  // The bench and the tests start cli/main.ts, not bin/cqs.js: the bundle must be taken up there.
  it('is where a cqs process loads TypeBox from', async () => {
    const bundle = pathToFileURL(await makeTypeboxBundle()).href;
    const loaded = traceCqsHelp(
      await tempDir('cqs-typebox-loads-'),
      `{ load(url, context, next) { log(url); return next(url, context); } }`,
    );
    assert.ok(
      loaded.some((url) => url.startsWith(bundle)),
      'no module of the bundle was loaded',
    );
    const own = loaded.filter((url) => url.includes('/node_modules/typebox/'));
    assert.deepEqual(own, [], "TypeBox's own modules were loaded");
  });
});
