/**
 * An S3 endpoint that takes the connection and never answers: each request fails after S3_TIMEOUT of
 * silence, as storage being unavailable, instead of holding its caller for ever. The SDK set no timeout,
 * and since a running job's lease is renewed, a stalled read held its worker's slot for good.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createStorage } from '../src/adapters/storage/factory.ts';
import { StorageUnavailableError } from '../src/adapters/storage/storage.ts';
import { loadConfig } from '../src/config/config.ts';

/** Settles with the promise, or rejects once `ms` have passed: so a hang fails the test instead of stalling it. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('S3 requests to an endpoint that never answers', () => {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {}); // reads the request, answers nothing
  });
  let endpoint = '';
  before(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('fails each request as storage unavailable after S3_TIMEOUT of silence', async () => {
    const storage = await createStorage(
      loadConfig({
        STORAGE_BACKEND: 's3',
        S3_ENDPOINT: endpoint,
        S3_BUCKET: 'stalled',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'key',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_TIMEOUT: '1',
        DATA_DIR: '/nonexistent-not-used',
      }),
    );
    try {
      const requests: [string, () => Promise<unknown>][] = [
        ['head', () => storage.head('calls/x')],
        ['open', () => storage.open('calls/x')],
        ['delete', () => storage.delete('calls/x')],
      ];
      for (const [what, request] of requests) {
        const started = Date.now();
        // Three tries of the SDK at 1 s each, with its backoff between: well under 20 s.
        await assert.rejects(within(20_000, request()), StorageUnavailableError, what);
        const took = Date.now() - started;
        assert.ok(took >= 1000, `${what} failed after ${took} ms, before the timeout`);
      }
    } finally {
      await storage.close();
    }
  });
});
