/**
 * A 249 MB upload through a real listening server must not raise the process's resident memory by more
 * than 64 MB: the body is streamed to disk. Its own file, so that the process is fresh when it measures.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { stat, unlink } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { EmbeddedStorage } from '../src/adapters/storage/embedded.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, pathOf } from './helpers/media.ts';

const SIZE = 249_000_000;
const LIMIT_MB = 64;

/** PUTs `size` bytes made as they are sent (one 64 KiB block at a time); returns the answer and the MD5. */
function putGenerated(port: number, path: string, size: number) {
  const block = Buffer.alloc(1 << 16, 7);
  const md5 = createHash('md5');
  let sent = 0;
  const body = new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = block.subarray(0, Math.min(block.length, size - sent));
      sent += chunk.length;
      md5.update(chunk);
      this.push(chunk);
    },
  });
  return new Promise<{ status: number; etag: string | undefined; md5: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path,
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, md5: md5.digest('hex') }),
        );
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

for (const backend of BACKENDS) {
  describe(`a 249 MB upload to the embedded storage (${backend})`, () => {
    let h: Harness;
    let port: number;
    before(async () => {
      h = await startHarness(backend);
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      port = (h.app.server.address() as AddressInfo).port;
    });
    after(() => h.close());

    it(`is streamed to disk, raising resident memory by less than ${LIMIT_MB} MB`, async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, {
        contentType: 'application/octet-stream',
        filename: 'big',
      });
      const before = process.memoryUsage();
      const baseline = before.rss;
      let peak = baseline;
      // Buffers live outside the V8 heap: a body held in memory would show here first.
      let peakBuffers = before.arrayBuffers;
      const sample = () => {
        const now = process.memoryUsage();
        peak = Math.max(peak, now.rss);
        peakBuffers = Math.max(peakBuffers, now.arrayBuffers);
      };
      const sampler = setInterval(sample, 5);
      const started = performance.now();
      const response = await putGenerated(port, pathOf(upload.upload_url), SIZE);
      clearInterval(sampler);
      sample();
      const seconds = (performance.now() - started) / 1000;
      const growth = (peak - baseline) / 1e6;
      const bufferGrowth = (peakBuffers - before.arrayBuffers) / 1e6;
      console.log(
        `249 MB upload (${backend}): ${seconds.toFixed(1)} s; resident memory ${(baseline / 1e6).toFixed(0)} MB ` +
          `before, peak ${(peak / 1e6).toFixed(0)} MB, growth ${growth.toFixed(1)} MB; ` +
          `buffers growth ${bufferGrowth.toFixed(1)} MB`,
      );
      // Garbage not yet collected counts here, so the bound is looser; a held body would be 249 MB.
      assert.ok(bufferGrowth < 2 * LIMIT_MB, `buffers grew by ${bufferGrowth.toFixed(1)} MB`);
      assert.equal(response.status, 200);
      assert.equal(response.etag, `"${response.md5}"`);
      const root = (h.services.storage as EmbeddedStorage).root;
      const key = decodeURIComponent(new URL(upload.upload_url).pathname.split('/object/')[1] ?? '');
      assert.equal((await stat(join(root, key))).size, SIZE);
      assert.ok(growth < LIMIT_MB, `resident memory grew by ${growth.toFixed(1)} MB`);
      await unlink(join(root, key));
    });
  });
}
