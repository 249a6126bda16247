/**
 * `npm start` passes a stop on to the server: npm forwards SIGTERM to the script's shell, and a shell that
 * ran `node …` as its child died without passing it on, leaving the server running with no parent (what a
 * process manager that stops `npm start` does). The script `exec`s node, so the signal reaches the server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { within } from './helpers/eventually.ts';
import { childEnv, freePort } from './helpers/process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('stops the server when npm is sent SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cqs-npm-start-'));
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: childEnv({
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        CQS_BOOTSTRAP: 'false',
        WORKER: 'false',
      }),
    });
    let output = '';
    npm.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    npm.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    let server = 0;
    try {
      await within(60_000, 'the server listens', async () => /Server listening/.test(output));
      server = Number(/"pid":(\d+)/.exec(output)?.[1]);
      assert.ok(server > 0 && server !== npm.pid, output);
      npm.kill('SIGTERM');
      await within(15_000, 'the server stops', async () => !alive(server));
      assert.match(output, /"msg":"stopping"/);
    } finally {
      if (server && alive(server)) process.kill(server, 'SIGKILL');
      if (npm.exitCode === null) npm.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
