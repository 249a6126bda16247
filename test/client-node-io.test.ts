/**
 * @cqs/client/node's own HTTP: nodePut and downloadTo reject with the signal's reason on abort, fail a
 * stalled transfer after their idle timeout, and downloads follow redirects (up to a bound).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { downloadTo } from '../packages/client/src/download.ts';
import { CqsError } from '../packages/client/src/index.ts';
import { createNodePut, DEFAULT_IDLE_TIMEOUT_MS, nodePut } from '../packages/client/src/node.ts';

/** A local HTTP server; its URL. */
async function localServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A stream of `size` zero bytes made as it is read. */
function zeros(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const n = Math.min(1 << 16, size - sent);
      if (n <= 0) return controller.close();
      sent += n;
      controller.enqueue(new Uint8Array(n));
    },
  });
}

const link = (url: string, size = 1000) => ({ url, expires_in: 300, content_type: 'audio/wav', size });

describe('client node I/O', () => {
  let server: { url: string; close(): Promise<void> };
  let dir: string;
  const content = Buffer.from('RIFF recording bytes '.repeat(50));
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cqs-client-node-io-'));
    let hops = 0;
    server = await localServer((req, res) => {
      const path = req.url ?? '';
      if (req.method === 'PUT' && path === '/put/stall') return; // reads nothing, answers nothing
      if (req.method === 'PUT' && path === '/put/silent') return void req.resume(); // reads all, never answers
      if (path === '/file') {
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': content.length }).end(content);
      } else if (path === '/r1') res.writeHead(307, { location: '/r2' }).end();
      else if (path === '/r2') res.writeHead(302, { location: `${server.url}/file` }).end();
      else if (path === '/loop') res.writeHead(301, { location: `/loop?${++hops}` }).end();
      else if (path.startsWith('/loop?')) res.writeHead(301, { location: `/loop?${++hops}` }).end();
      else if (path === '/no-location') res.writeHead(307).end();
      else if (path === '/half') {
        // Headers and some of the body, then nothing.
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': '100000' });
        res.write(Buffer.alloc(1000));
      } else if (path === '/nothing') {
        // Never answers.
      } else res.writeHead(404).end();
    });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const parts = async () => (await readdir(dir)).filter((f) => f.endsWith('.part'));

  it("nodePut rejects with the signal's reason, before the body and half way through it", async () => {
    for (const path of ['/put/stall', '/put/silent']) {
      const controller = new AbortController();
      const reason = new Error(`stop ${path}`);
      setTimeout(() => controller.abort(reason), 1500);
      const put = nodePut(`${server.url}${path}`, {
        headers: { 'content-type': 'audio/wav', 'content-length': String(500_000_000) },
        body: zeros(500_000_000),
        signal: controller.signal,
      });
      await assert.rejects(put, (e: unknown) => e === reason);
    }
    const reason = new Error('already');
    await assert.rejects(
      nodePut(`${server.url}/put/silent`, {
        headers: { 'content-length': '3' },
        body: new Uint8Array(3),
        signal: AbortSignal.abort(reason),
      }),
      (e: unknown) => e === reason,
    );
  });

  it("downloadTo rejects with the signal's reason, before the answer and during the body, leaving no file", async () => {
    for (const path of ['/nothing', '/half']) {
      const controller = new AbortController();
      const reason = new Error(`stop ${path}`);
      setTimeout(() => controller.abort(reason), 500);
      await assert.rejects(
        downloadTo(link(`${server.url}${path}`, 100_000), join(dir, 'aborted.wav'), {
          signal: controller.signal,
        }),
        (e: unknown) => e === reason,
      );
    }
    assert.deepEqual(await parts(), []);
  });

  it('downloadTo follows redirects, up to maxRedirects, and names a redirect it cannot follow', async () => {
    const out = join(dir, 'redirected.wav');
    const result = await downloadTo(link(`${server.url}/r1`, content.length), out);
    assert.equal(result.size, content.length);
    assert.deepEqual(await readFile(out), content);
    await assert.rejects(
      downloadTo(link(`${server.url}/loop`), join(dir, 'loop.wav')),
      (e: Error) => e instanceof CqsError && e.status === 301 && /more than 5 redirects/.test(e.message),
    );
    await assert.rejects(
      downloadTo(link(`${server.url}/r1`), join(dir, 'few.wav'), { maxRedirects: 1 }),
      /more than 1 redirects/,
    );
    await assert.rejects(
      downloadTo(link(`${server.url}/no-location`), join(dir, 'nowhere.wav')),
      (e: Error) => e instanceof CqsError && e.status === 307 && /without a Location/.test(e.message),
    );
    assert.deepEqual(await parts(), []);
  });

  it('a stalled PUT or download fails after its idle timeout (default one minute)', async () => {
    assert.equal(DEFAULT_IDLE_TIMEOUT_MS, 60_000);
    // A signal ends the waits should the timeout not work, with another error than the one expected.
    const backstop = AbortSignal.timeout(30_000);
    const idle = /nothing sent or received for 400 ms/;
    const started = Date.now();
    await assert.rejects(
      createNodePut({ idleTimeoutMs: 400 })(`${server.url}/put/silent`, {
        headers: { 'content-length': String(100_000) },
        body: zeros(100_000),
        signal: backstop,
      }),
      idle,
    );
    for (const path of ['/nothing', '/half']) {
      await assert.rejects(
        downloadTo(link(`${server.url}${path}`, 100_000), join(dir, 'idle.wav'), {
          idleTimeoutMs: 400,
          signal: backstop,
        }),
        idle,
      );
    }
    assert.ok(Date.now() - started < 25_000);
    assert.deepEqual(await parts(), []);
  });
});
