/**
 * The embedded storage's signed GET URLs (decision 25): GET and HEAD with the signed Content-Type exactly,
 * Content-Length, ETag, Accept-Ranges, one byte range (206) or 416, and S3's XML errors. Objects are
 * stored through the real upload URL first.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EmbeddedStorage } from '../src/adapters/storage/embedded.ts';
import { SIGNED_PARAMS, signedGetUrl } from '../src/adapters/storage/embedded-signer.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, pathOf } from './helpers/media.ts';
import { assertS3Error } from './helpers/s3-errors.ts';

const SIZE = 100_000;

for (const backend of BACKENDS) {
  describe(`embedded storage read URLs (${backend})`, () => {
    let h: Harness;
    let storage: EmbeddedStorage;

    let origin: string;

    before(async () => {
      h = await startHarness(backend);
      storage = h.services.storage as EmbeddedStorage;
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
    });
    after(() => h.close());

    /** Uploads random bytes through a real upload URL; returns the object key and the bytes. */
    async function stored(size = SIZE): Promise<{ key: string; bytes: Buffer }> {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const bytes = randomBytes(size);
      const res = await h.app.inject({
        method: 'PUT',
        url: pathOf(upload.upload_url),
        headers: { 'content-type': 'audio/wav' },
        payload: bytes,
      });
      assert.equal(res.statusCode, 200, res.body);
      const key = decodeURIComponent(new URL(upload.upload_url).pathname.split('/object/')[1] ?? '');
      return { key, bytes };
    }

    async function readUrl(key: string, contentType = 'audio/wav'): Promise<string> {
      return pathOf((await storage.presignGet(key, contentType, 60)).url);
    }

    function get(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
      return h.app.inject({ method, url, headers });
    }

    it('serves the whole object with the signed Content-Type exactly, its length, a strong ETag and Accept-Ranges', async () => {
      const { key, bytes } = await stored();
      const res = await get(await readUrl(key));
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'audio/wav');
      assert.equal(res.headers['content-length'], String(SIZE));
      assert.equal(res.headers['accept-ranges'], 'bytes');
      assert.match(String(res.headers.etag), /^"[0-9a-f-]+"$/);
      assert.ok(res.headers['last-modified']);
      assert.deepEqual(res.rawPayload, bytes);
      // Whatever type the URL was signed with is the one served, parameters and case included.
      const typed = await get(await readUrl(key, 'audio/ogg; codecs=opus'));
      assert.equal(typed.headers['content-type'], 'audio/ogg; codecs=opus');
    });

    it('serves an object so that no browser runs it as a page of the service origin, whatever its type', async () => {
      const { key } = await stored();
      for (const res of [
        await get(await readUrl(key, 'text/html')),
        await get(await readUrl(key), {}, 'HEAD'),
      ]) {
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
        assert.equal(res.headers['content-security-policy'], 'sandbox');
      }
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const { key } = await stored();
      const url = await readUrl(key);
      const [head, whole] = [await get(url, {}, 'HEAD'), await get(url)];
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      for (const name of ['content-type', 'content-length', 'etag', 'accept-ranges', 'last-modified']) {
        assert.equal(head.headers[name], whole.headers[name], name);
      }
      const ranged = await get(url, { range: 'bytes=0-9' }, 'HEAD');
      assert.equal(ranged.statusCode, 206);
      assert.equal(ranged.headers['content-length'], '10');
      assert.equal(ranged.headers['content-range'], `bytes 0-9/${SIZE}`);
    });

    it('serves one range as 206 with Content-Range: closed, open-ended and suffix forms', async () => {
      const { key, bytes } = await stored();
      const url = await readUrl(key);
      const cases: [string, number, number][] = [
        ['bytes=100-199', 100, 199],
        [`bytes=${SIZE - 500}-`, SIZE - 500, SIZE - 1],
        ['bytes=-10', SIZE - 10, SIZE - 1],
        [`bytes=5-${SIZE * 2}`, 5, SIZE - 1],
      ];
      for (const [range, start, end] of cases) {
        const res = await get(url, { range });
        assert.equal(res.statusCode, 206, range);
        assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${SIZE}`, range);
        assert.equal(res.headers['content-length'], String(end - start + 1), range);
        assert.equal(res.headers['content-type'], 'audio/wav');
        assert.deepEqual(res.rawPayload, bytes.subarray(start, end + 1), range);
      }
    });

    it('sends an object of several read buffers byte for byte over a real connection, whole and in a range', async () => {
      // The body is read into two buffers that are reused (file-body.ts): a buffer read into again too early
      // would repeat or mix chunks, which only a real socket's asynchronous writes would show.
      const size = 5 * 256 * 1024 + 7;
      const { key, bytes } = await stored(size);
      const url = `${origin}${await readUrl(key)}`;
      const whole = await fetch(url);
      assert.equal(whole.status, 200);
      assert.ok(Buffer.from(await whole.arrayBuffer()).equals(bytes));
      const [start, end] = [256 * 1024 - 3, 3 * 256 * 1024 + 5];
      const part = await fetch(url, { headers: { range: `bytes=${start}-${end}` } });
      assert.equal(part.status, 206);
      assert.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(start, end + 1)));
    });

    it('closes the object file when the client goes away mid-answer, and goes on serving', async () => {
      const { key, bytes } = await stored(8 * 1024 * 1024);
      const url = `${origin}${await readUrl(key)}`;
      const file = join(storage.root, key);
      const openOnFile = async () => {
        let n = 0;
        for (const fd of await readdir('/proc/self/fd')) {
          if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === file) n++;
        }
        return n;
      };
      const aborted = new AbortController();
      const res = await fetch(url, { signal: aborted.signal });
      const reader = res.body?.getReader();
      await reader?.read();
      assert.equal(await openOnFile(), 1, 'the file is open while it is being sent');
      aborted.abort();
      await reader?.cancel().catch(() => {});
      for (let i = 0; i < 100 && (await openOnFile()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await openOnFile(), 0, 'the file is closed once the client has gone');
      const again = await fetch(url);
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(bytes));
    });

    it('answers an unsatisfiable range 416 with Content-Range bytes */SIZE and InvalidRange', async () => {
      const { key } = await stored();
      const res = await get(await readUrl(key), { range: `bytes=${SIZE}-` });
      assertS3Error(res, 416, 'InvalidRange');
      assert.equal(res.headers['content-range'], `bytes */${SIZE}`);
      assert.match(res.body, new RegExp(`<ActualObjectSize>${SIZE}</ActualObjectSize>`));
    });

    it('reads a Range header as S3 and RFC 9110 do at its edges', async () => {
      const { key, bytes } = await stored();
      const url = await readUrl(key);
      // A suffix longer than the object is all of it; the unit is case-insensitive; blanks are allowed.
      const partial: [string, number, number][] = [
        [`bytes=-${SIZE * 5}`, 0, SIZE - 1],
        [`bytes=-${SIZE}`, 0, SIZE - 1],
        ['Bytes=0-9', 0, 9],
        ['bytes= 10-19 ', 10, 19],
      ];
      for (const [range, start, end] of partial) {
        const res = await get(url, { range });
        assert.equal(res.statusCode, 206, range);
        assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${SIZE}`, range);
        assert.deepEqual(res.rawPayload, bytes.subarray(start, end + 1), range);
      }
      // Several ranges, touching or overlapping, and a range whose end is before its start: the whole object.
      for (const range of ['bytes=0-9,10-19', 'bytes=0-9,5-15', 'bytes=20-10']) {
        const res = await get(url, { range });
        assert.equal(res.statusCode, 200, range);
        assert.deepEqual(res.rawPayload, bytes, range);
      }
      // A suffix of nothing is unsatisfiable.
      assertS3Error(await get(url, { range: 'bytes=-0' }), 416, 'InvalidRange');
    });

    it('answers several ranges, a malformed range, or a stale If-Range with the whole object (200)', async () => {
      const { key, bytes } = await stored();
      const url = await readUrl(key);
      for (const range of ['bytes=0-9,100-109', 'bytes=abc', 'items=0-9']) {
        const res = await get(url, { range });
        assert.equal(res.statusCode, 200, range);
        assert.equal(res.headers['content-length'], String(SIZE), range);
        assert.deepEqual(res.rawPayload, bytes, range);
      }
      const etag = String((await get(url, {}, 'HEAD')).headers.etag);
      assert.equal((await get(url, { range: 'bytes=0-9', 'if-range': etag })).statusCode, 206);
      assert.equal((await get(url, { range: 'bytes=0-9', 'if-range': '"other"' })).statusCode, 200);
    });

    it('answers 403 AccessDenied once expired and SignatureDoesNotMatch when altered, before looking at the object', async () => {
      const { key } = await stored();
      const past = Math.floor(Date.now() / 1000) - 1;
      assertS3Error(
        await get(pathOf(signedGetUrl('http://x', storage.secret, key, 'audio/wav', past))),
        403,
        'AccessDenied',
      );
      const url = new URL(`http://x${await readUrl(key)}`);
      const edits: ((q: URLSearchParams) => void)[] = [
        (q) => q.set(SIGNED_PARAMS.contentType, 'text/html'),
        (q) => q.set(SIGNED_PARAMS.expires, String(Number(q.get(SIGNED_PARAMS.expires)) + 60)),
        (q) => q.set(SIGNED_PARAMS.signature, '0'.repeat(64)),
        (q) => q.append('response-content-type', 'text/html'),
      ];
      for (const edit of edits) {
        const u = new URL(url);
        edit(u.searchParams);
        assertS3Error(await get(`${u.pathname}${u.search}`), 403, 'SignatureDoesNotMatch');
      }
      const otherKey = url.pathname.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
      assertS3Error(await get(`${otherKey}${url.search}`), 403, 'SignatureDoesNotMatch');
      assertS3Error(await get(url.pathname), 403, 'AccessDenied');
    });

    it('refuses to write through a read URL, and to read through an upload URL', async () => {
      const { key, bytes } = await stored();
      const url = await readUrl(key);
      const put = await h.app.inject({
        method: 'PUT',
        url,
        headers: { 'content-type': 'audio/wav' },
        payload: 'overwritten',
      });
      assertS3Error(put, 403, 'SignatureDoesNotMatch');
      assert.deepEqual((await get(url)).rawPayload, bytes, 'the object is unchanged');
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      assertS3Error(await get(pathOf(upload.upload_url)), 403, 'SignatureDoesNotMatch');
    });

    it('answers 404 NoSuchKey once the object is gone', async () => {
      const { key } = await stored();
      const url = await readUrl(key);
      await unlink(join(storage.root, key));
      const res = await get(url);
      assertS3Error(res, 404, 'NoSuchKey');
      assert.match(res.body, /<Key>[^<]+<\/Key>/);
      assert.equal((await get(url, {}, 'HEAD')).statusCode, 404);
    });
  });
}
