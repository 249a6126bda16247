/**
 * `cqs serve` re-executes itself with its V8 memory flags (src/cli/heap-flags.ts), and leaves them to an
 * operator who chose V8 flags of their own. Read from the running process's command line (Linux /proc).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  NO_MAGLEV,
  NO_PRETENURING,
  SERVE_HEAP_GROWING_PERCENT,
  SERVE_SEMI_SPACE_MB,
} from '../src/cli/heap-flags.ts';
import { freePort, servedProcEntry } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const OURS = [
  `--max-semi-space-size=${SERVE_SEMI_SPACE_MB}`,
  `--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`,
  NO_PRETENURING,
  NO_MAGLEV,
  '--liftoff-only',
];

describe('cqs serve memory flags', { skip: !existsSync('/proc/self/cmdline') && 'needs /proc' }, () => {
  const tempDir = tempDirs();

  /** The command line `cqs serve` runs with once it listens (embedded database), given `env`. */
  async function servedArgs(env: Record<string, string>): Promise<string[]> {
    return servedProcEntry(
      {
        DATA_DIR: await tempDir('cqs-flags-'),
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ...env,
      },
      'cmdline',
    );
  }

  it('runs with its semi-space cap, heap growth, no pretenuring, no Maglev and Liftoff on the embedded database', async () => {
    const args = await servedArgs({});
    for (const flag of OURS) assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
  });

  it("keeps an operator's own V8 flags and adds none", async () => {
    const args = await servedArgs({ NODE_OPTIONS: '--max-semi-space-size=8' });
    for (const flag of OURS) assert.ok(!args.includes(flag), `${flag} not in ${args.join(' ')}`);
  });
});
