/** Starts a baseline server of bench/baselines as a child process on a free loopback port. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/process.ts';
import { deferCleanup } from './cleanup.ts';
import { type Child, spawnNode, waitForHttp } from './process.ts';
import { childEnv } from './service.ts';

/** The name of the baseline of every cached read (product lists, handoff records): bench/baselines/bare-json.ts. */
export const BARE_JSON_BASELINE = 'bare node:http, fixed JSON';

/** A running baseline. */
export interface Baseline {
  url: string;
  child: Child;
  /** Its own temp folder (DATA_DIR). */
  dataDir: string;
  stop(): Promise<void>;
}

/** Starts bench/baselines/<file> with PORT, DATA_DIR and `env`, and waits until it answers. */
export async function startBaseline(file: string, env: Record<string, string> = {}): Promise<Baseline> {
  const script = new URL(`../baselines/${file}`, import.meta.url).pathname;
  const dataDir = await mkdtemp(join(tmpdir(), 'cqs-bench-baseline-'));
  const removeDir = deferCleanup(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnNode(file, script, [], childEnv({ ...env, PORT: String(port), DATA_DIR: dataDir }));
  const stop = async () => {
    await child.stop();
    await removeDir();
  };
  try {
    await waitForHttp(child, `${url}/`);
    return { url, child, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
