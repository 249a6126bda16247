/**
 * The app's build: served by the service under /app/, so every asset URL starts there. The size of the
 * first load's JavaScript (gzipped) is printed and checked against the budget after each build.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import { appSourceHash, SOURCE_HASH_FILE } from './source-hash.ts';

/** First-load JavaScript budget, gzipped. */
const BUDGET_BYTES = 150 * 1024;

/**
 * Prints the gzipped size of the built JavaScript and fails the build past the budget; then writes the
 * hash of the sources the build was made from, which the service checks at start.
 */
function bundleBudget(): Plugin {
  let outDir = join(import.meta.dirname, 'dist');
  return {
    name: 'cqs-bundle-budget',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const dir = join(outDir, 'assets');
      let total = 0;
      for (const name of readdirSync(dir)) {
        if (name.endsWith('.js')) total += gzipSync(readFileSync(join(dir, name))).length;
      }
      console.log(`app bundle: ${(total / 1024).toFixed(1)} KB of JavaScript gzipped (budget 150 KB)`);
      if (total > BUDGET_BYTES)
        throw new Error(`app bundle ${total} bytes gzipped is over the 150 KB budget`);
      writeFileSync(join(outDir, SOURCE_HASH_FILE), `${appSourceHash(import.meta.dirname)}\n`);
    },
  };
}

export default defineConfig({
  base: '/app/',
  root: import.meta.dirname,
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, modulePreload: { polyfill: false } },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [bundleBudget()],
  // The dev server sends the API and the signed recording URLs to a running service.
  server: {
    proxy: Object.fromEntries(
      ['/api', '/storage'].map((path) => [path, process.env.CQS_URL ?? 'http://127.0.0.1:8080']),
    ),
  },
});
