/**
 * Regression of issue 18 (finding 3): a PUT whose bytes ran past its Content-Length was answered
 * `400 IncompleteBody` (the extra bytes, parsed as a next request, failed the parser while the upload was
 * still being committed) although its declared bytes were stored and verified. The rule now: a body that
 * ends at Content-Length is a success and gets 200; the extra bytes are a next request, answered on their
 * own (400) after it. Short, exact and over-long bodies on a raw socket: the answer and the stored state agree.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EmbeddedStorage } from '../src/adapters/storage/embedded.ts';
import type { UploadUrlResponse } from '../src/domain/uploads/uploads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, pathOf } from './helpers/media.ts';

/**
 * Writes `head` and `body` on one socket (then half-closes it when `end`), and returns the status of every
 * answer, once the server closed the socket or sent nothing more for 2 s after an answer.
 */
function exchange(port: number, head: string, body: Buffer, end: boolean): Promise<number[]> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let quiet = setTimeout(() => socket.destroy(), 60_000);
    socket.on('data', (d) => {
      data += d.toString('latin1');
      clearTimeout(quiet);
      quiet = setTimeout(() => socket.destroy(), 2000);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(quiet);
      resolve([...data.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])));
    });
    socket.on('connect', () => {
      socket.write(head);
      if (end) socket.end(body);
      else socket.write(body);
    });
  });
}

for (const backend of BACKENDS) {
  describe(`upload bodies against their Content-Length (${backend})`, () => {
    let h: Harness;
    let port: number;
    before(async () => {
      h = await startHarness(backend);
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      port = (h.app.server.address() as AddressInfo).port;
    });
    after(() => h.close());

    async function statusOf(c: TestCompany, upload: UploadUrlResponse): Promise<string> {
      const res = await h.request({ method: 'GET', url: `/api/v1/upload/${upload.upload_id}`, key: c.key });
      return res.json().status as string;
    }

    function objectFile(upload: UploadUrlResponse): string {
      const key = decodeURIComponent(new URL(upload.upload_url).pathname.split('/object/')[1] ?? '');
      return join((h.services.storage as EmbeddedStorage).root, key);
    }

    async function put(declared: number, sent: number) {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const head =
        `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
        `Content-Length: ${declared}\r\n\r\n`;
      const statuses = await exchange(port, head, Buffer.alloc(sent, 0x61), sent < declared);
      return { statuses, status: await statusOf(c, upload), stored: existsSync(objectFile(upload)) };
    }

    it('an exact body: 200, stored', async () => {
      assert.deepEqual(await put(1000, 1000), { statuses: [200], status: 'uploaded', stored: true });
    });

    it('a longer body: 200 for the declared bytes, which are stored; the rest is answered on its own', async () => {
      const r = await put(1000, 1500);
      assert.equal(r.statuses[0], 200, JSON.stringify(r));
      assert.ok(
        r.statuses.slice(1).every((s) => s === 400),
        JSON.stringify(r),
      );
      assert.equal(r.status, 'uploaded');
      assert.equal(r.stored, true);
    });

    it('a shorter body: 400, nothing stored', async () => {
      const r = await put(1000, 600);
      assert.deepEqual(r, { statuses: [400], status: 'pending', stored: false });
    });
  });
}
