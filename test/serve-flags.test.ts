/**
 * `cqs serve` re-executes itself with its V8 memory flags (src/cli/heap-flags.ts), and leaves them to an
 * operator who chose V8 flags of their own. Read from the running process's command line (Linux /proc).
 * The operator commands run with them too; the commands that only talk to a running service do not.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  NO_MAGLEV,
  NO_PRETENURING,
  SERVE_HEAP_GROWING_PERCENT,
  SERVE_SEMI_SPACE_MB,
} from '../src/cli/heap-flags.ts';
import { freePort, runCli, servedProcEntry } from './helpers/process.ts';
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

  /** The flags `cqs args` ended with, on a new embedded data directory. */
  async function commandArgs(args: string[]): Promise<string[]> {
    const dir = await tempDir('cqs-flags-');
    const file = join(dir, 'exec-argv.json');
    const recorder = fileURLToPath(new URL('./helpers/exec-argv-at-exit.ts', import.meta.url));
    const run = await runCli(args, {
      DATA_DIR: join(dir, 'data'),
      CQS_EXEC_ARGV_FILE: file,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${recorder}`,
    });
    assert.equal(run.code, 0, run.err);
    return JSON.parse(await readFile(file, 'utf8')) as string[];
  }

  it('runs an operator command, which opens the database, with the same flags', async () => {
    const args = await commandArgs(['company', 'list']);
    for (const flag of OURS) assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
  });

  it('leaves a command that only talks to a running service as Node started it', async () => {
    const args = await commandArgs(['products', '--help']);
    for (const flag of OURS) assert.ok(!args.includes(flag), `${flag} not in ${args.join(' ')}`);
  });
});
