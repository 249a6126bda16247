/**
 * A worker thread of `storage-secret.test.ts`: for each directory, meets the other thread at a barrier,
 * then loads the signing secret at the same moment, as two processes starting on one new DATA_DIR do.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadSigningSecret } from '../../src/adapters/storage/embedded.ts';

const { dirs, barrier } = workerData as { dirs: string[]; barrier: SharedArrayBuffer };
const arrived = new Int32Array(barrier);
const secrets: string[] = [];
for (let i = 0; i < dirs.length; i++) {
  Atomics.add(arrived, i, 1);
  while (Atomics.load(arrived, i) < 2) {
    // Spin: both threads must reach the directory before either loads.
  }
  secrets.push(loadSigningSecret(dirs[i] as string, undefined));
}
parentPort?.postMessage(secrets);
