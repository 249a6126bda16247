/**
 * `cqs serve`'s re-executed image gets glibc's MALLOC_ARENA_MAX (src/cli/heap-flags.ts SERVE_ENV), and
 * keeps an operator's own value. Read from the running process's environment (Linux /proc).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { SERVE_ENV } from '../src/cli/heap-flags.ts';
import { freePort, serveCli } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

describe('cqs serve environment', { skip: !existsSync('/proc/self/environ') && 'needs /proc' }, () => {
  const tempDir = tempDirs();

  /** The environment `cqs serve` runs with once it listens (embedded database), given `env`. */
  async function servedEnv(env: Record<string, string>): Promise<Map<string, string>> {
    const served = serveCli({
      DATA_DIR: await tempDir('cqs-env-'),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      ...env,
    });
    try {
      await served.ready;
      const pid = served.child.pid;
      assert.ok(pid, 'the child has a pid');
      const entries = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter(Boolean);
      return new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    } finally {
      await served.stop();
    }
  }

  it('runs with two malloc arenas, unless the operator chose a number', async () => {
    assert.equal(SERVE_ENV.MALLOC_ARENA_MAX, '2');
    assert.equal((await servedEnv({})).get('MALLOC_ARENA_MAX'), '2');
    assert.equal((await servedEnv({ MALLOC_ARENA_MAX: '4' })).get('MALLOC_ARENA_MAX'), '4');
  });
});
