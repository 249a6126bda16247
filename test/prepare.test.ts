/**
 * `cqs prepare` (npm install's postinstall): the embedded archive, and Node's compile cache filled with
 * every module of the service under the V8 flags of `cqs serve` on each database.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDirs } from './helpers/temp-dirs.ts';

const CQS = new URL('../bin/cqs.js', import.meta.url).pathname;

describe('cqs prepare', () => {
  const tempDir = tempDirs();
  it('fills a compile cache per set of serve flags with every module, imported without side effects', async () => {
    const cache = await tempDir('cqs-compile-cache-');
    const out = execFileSync(process.execPath, [CQS, 'prepare'], {
      env: { ...process.env, NODE_COMPILE_CACHE: cache },
      encoding: 'utf8',
    });
    const modules = Number(/compile cache: (\d+) modules/.exec(out)?.[1]);
    assert.ok(modules > 100, out);
    // One folder per V8 flag set: embedded (with --liftoff-only) and PostgreSQL each hold every module
    // (a third is the prepare command's own, which has the cache on through the variable).
    const full = readdirSync(cache).filter((set) => readdirSync(join(cache, set)).length >= modules);
    assert.ok(full.length >= 2, readdirSync(cache).join(', '));
  });
});
