/** A second service process (`cqs serve`) on the harness's PostgreSQL database, reached over real HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A running second process. */
export interface SecondProcess {
  url: string;
  /** What the process wrote to stderr (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** Starts `node src/cli/main.ts serve` on `databaseUrl` and waits until it is ready. */
export async function startSecondProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<SecondProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cqs-second-'));
  const port = await freePort();
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    CQS_BOOTSTRAP: 'false',
    DATA_DIR: dataDir,
    WORKER: 'false',
    LOG_LEVEL: 'warn',
    ...env,
  };
  // Otherwise the child believes it is a test file of this run.
  delete childEnv.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(killer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`second process exited with ${child.exitCode}: ${stderr}`);
    }
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`second process not ready after 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stderr: () => stderr, stop };
}
