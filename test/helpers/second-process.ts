/** A second service process (`cqs serve`) on the harness's PostgreSQL database, reached over real HTTP. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, serveCli } from './process.ts';

/** A running second process. */
export interface SecondProcess {
  url: string;
  /** What the process wrote (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `cqs serve` on `databaseUrl` (no worker, no bootstrap) and waits until it listens. */
export async function startSecondProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<SecondProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cqs-second-'));
  const port = await freePort();
  const served = serveCli({
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    CQS_BOOTSTRAP: 'false',
    DATA_DIR: dataDir,
    WORKER: 'false',
    // Info, not less: readiness is the "Server listening" line.
    LOG_LEVEL: 'info',
    ...env,
  });
  const stop = async () => {
    await served.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await served.ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, stderr: served.output, stop };
}
