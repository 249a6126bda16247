/**
 * `cqs serve`'s re-executed image gets glibc's MALLOC_ARENA_MAX (src/cli/heap-flags.ts SERVE_ENV), and
 * keeps an operator's own value. Read from the running process's environment (Linux /proc).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SERVE_ENV } from '../src/cli/heap-flags.ts';
import { freePort, servedProcEntry } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

describe('cqs serve environment', { skip: !existsSync('/proc/self/environ') && 'needs /proc' }, () => {
  const tempDir = tempDirs();

  /** The environment `cqs serve` runs with once it listens (embedded database), given `env`. */
  async function servedEnv(env: Record<string, string>): Promise<Map<string, string>> {
    const entries = await servedProcEntry(
      { DATA_DIR: await tempDir('cqs-env-'), PORT: String(await freePort()), HOST: '127.0.0.1', ...env },
      'environ',
    );
    return new Map(
      entries.filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
  }

  it('runs with two malloc arenas, unless the operator chose a number', async () => {
    assert.equal(SERVE_ENV.MALLOC_ARENA_MAX, '2');
    assert.equal((await servedEnv({})).get('MALLOC_ARENA_MAX'), '2');
    assert.equal((await servedEnv({ MALLOC_ARENA_MAX: '4' })).get('MALLOC_ARENA_MAX'), '4');
  });
});
