/**
 * The thread that hashes upload bodies (see md5-offload.ts): MD5 of a 200 MB body is about half a second of
 * CPU, which on the event loop would stall every other request and the body's own reading. Messages of
 * one upload arrive in order, so its hash sees the bytes in the order they were written.
 */
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { Md5Reply, Md5Request } from './md5-offload.ts';

const port = parentPort;
if (!port) throw new Error('md5-worker.ts runs as a worker thread');
const hashes = new Map<number, Hash>();

port.on('message', (message: Md5Request) => {
  const { id } = message;
  if (message.op === 'discard') {
    hashes.delete(id);
    return;
  }
  let hash = hashes.get(id);
  if (!hash) {
    hash = createHash('md5');
    hashes.set(id, hash);
  }
  if (message.op === 'update') {
    let bytes = 0;
    for (const chunk of message.chunks) {
      hash.update(chunk);
      bytes += chunk.byteLength;
    }
    port.postMessage({ id, hashed: bytes } satisfies Md5Reply);
    return;
  }
  hashes.delete(id);
  port.postMessage({ id, md5: hash.digest('hex') } satisfies Md5Reply);
});
