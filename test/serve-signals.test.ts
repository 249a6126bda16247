/**
 * `cqs serve` stops cleanly on a SIGTERM that comes while it starts: its handlers are installed before the
 * start (src/cli/commands/serve.ts). They used to come after it, so a signal in between killed the process
 * at once, the embedded database open: one stop in fifteen, sent the moment "Server listening" was
 * printed, ended that way, and a stop during the first start's bootstrap always did.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { within } from './helpers/eventually.ts';
import { freePort, serveCli } from './helpers/process.ts';

describe('cqs serve and a stop while it starts', () => {
  it('finishes the start, logs "stopping" and exits 0 when SIGTERM comes during the first start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cqs-serve-signal-'));
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), WORKER: 'false' };
    const serve = serveCli(env);
    try {
      // The demo company's banner is printed during the start, before the service listens.
      await within(60_000, 'the bootstrap banner', async () => serve.output().includes('First start'));
      assert.ok(!serve.output().includes('Server listening'), serve.output());
      serve.child.kill('SIGTERM');
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
        if (serve.child.exitCode !== null || serve.child.signalCode !== null) {
          resolve([serve.child.exitCode, serve.child.signalCode]);
        } else serve.child.once('exit', (c, s) => resolve([c, s]));
      });
      assert.equal(signal, null, `killed by ${signal}: ${serve.output()}`);
      assert.equal(code, 0, serve.output());
      assert.match(serve.output(), /"msg":"stopping"/);
      // The data directory was closed properly: a second start opens it.
      const again = serveCli({ ...env, PORT: String(await freePort()) });
      try {
        await again.ready;
      } finally {
        await again.stop();
      }
    } finally {
      await serve.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
