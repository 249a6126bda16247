import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq } from 'drizzle-orm';
import { jobs } from '../src/adapters/db/schema.ts';
import type { EmbeddedStorage } from '../src/adapters/storage/embedded.ts';
import { SIGNED_PARAMS, signedPutUrl } from '../src/adapters/storage/embedded-signer.ts';
import type { UploadUrlResponse } from '../src/domain/uploads/uploads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, pathOf } from './helpers/media.ts';
import { assertS3Error, s3Code } from './helpers/s3-errors.ts';

/** A response read off a raw socket. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends a request over a raw socket, so that the test controls the framing: `chunks` are written, then the
 * socket is half-closed (`end`), cut (`destroy`: no response), or left open (`wait`).
 */
function rawRequest(
  port: number,
  head: string,
  chunks: Buffer[],
  then: 'end' | 'destroy' | 'wait',
): Promise<RawResponse | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
    });
    socket.on('error', (error) => (then === 'destroy' ? resolve(undefined) : reject(error)));
    socket.on('close', () => {
      if (then === 'destroy') return resolve(undefined);
      const [top = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = top.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.on('connect', async () => {
      socket.write(head);
      for (const chunk of chunks) {
        socket.write(chunk);
        await sleep(5);
      }
      if (then === 'end') socket.end();
      if (then === 'destroy') socket.destroy();
    });
  });
}

for (const backend of BACKENDS) {
  describe(`embedded storage upload URLs (${backend})`, () => {
    let h: Harness;
    let port: number;
    let storage: EmbeddedStorage;
    const tmpDir = () => join(h.dataDir, 'objects-tmp');

    before(async () => {
      h = await startHarness(backend);
      storage = h.services.storage as EmbeddedStorage;
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      port = (h.app.server.address() as AddressInfo).port;
    });
    after(() => h.close());

    const objectFile = (upload: UploadUrlResponse) =>
      join(storage.root, decodeURIComponent(new URL(upload.upload_url).pathname.split('/object/')[1] ?? ''));

    async function statusOf(company: TestCompany, upload: UploadUrlResponse) {
      const res = await h.request({
        method: 'GET',
        url: `/api/v1/upload/${upload.upload_id}`,
        key: company.key,
      });
      return res.json().status as string;
    }

    function put(url: string, body: Buffer | string, headers: Record<string, string>, method = 'PUT') {
      return h.app.inject({ method: method as 'PUT', url, headers, payload: body });
    }

    async function assertNothingStored(company: TestCompany, upload: UploadUrlResponse) {
      // A refused body may still be draining when the answer arrives; its temporary file goes right after.
      for (let i = 0; i < 100 && (await readdir(tmpDir())).length > 0; i++) await sleep(20);
      assert.equal(existsSync(objectFile(upload)), false, 'no object');
      assert.deepEqual(await readdir(tmpDir()), [], 'no temporary file');
      assert.equal(await statusOf(company, upload), 'pending');
    }

    it('stores the bytes, answers 200 with the MD5 ETag, marks the upload uploaded and queues verification', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const body = Buffer.from('RIFF-not-really-a-wav');
      const res = await put(pathOf(upload.upload_url), body, { 'content-type': 'audio/wav' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers.etag, `"${createHash('md5').update(body).digest('hex')}"`);
      assert.equal(res.body, '');
      assert.deepEqual(await readFile(objectFile(upload)), body);
      assert.equal(await statusOf(c, upload), 'uploaded');
      const queued = await h.services.database.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, 'upload.verify'), eq(jobs.companyId, c.id)));
      assert.equal(queued.length, 1);
      assert.deepEqual(queued[0]?.payload, { uploadId: upload.upload_id });
      await h.runJobs();
    });

    it('needs no API key and takes no JSON: the signature is the credential', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, { contentType: 'application/json', filename: 'x' });
      const res = await put(pathOf(upload.upload_url), '{not json', { 'content-type': 'application/json' });
      assert.equal(res.statusCode, 200, res.body);
      await h.runJobs();
    });

    it('answers 403 SignatureDoesNotMatch for another Content-Type, or none', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      for (const headers of [
        { 'content-type': 'audio/mpeg' },
        { 'content-type': 'Audio/WAV' },
        { 'content-type': 'audio/wav; charset=x' },
        { 'content-type': 'not a type' },
        {},
      ]) {
        const res = await put(pathOf(upload.upload_url), 'bytes', headers as Record<string, string>);
        assertS3Error(res, 403, 'SignatureDoesNotMatch');
        assert.equal(res.headers.connection, 'close');
        // The message names the header to fix, the type it must be and the type that was sent.
        const sent = (headers as Record<string, string>)['content-type'];
        const message = /<Message>([^<]*)<\/Message>/.exec(res.body)?.[1] ?? '';
        assert.ok(message.includes('signed for Content-Type: audio/wav'), message);
        assert.ok(
          message.includes(sent === undefined ? 'sent no Content-Type header' : `sent Content-Type: ${sent}`),
          message,
        );
        assert.match(res.body, /<ExpectedContentType>audio\/wav<\/ExpectedContentType>/);
      }
      await assertNothingStored(c, upload);
    });

    it("names curl's default Content-Type when a PUT sends it", async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const res = await put(pathOf(upload.upload_url), 'bytes', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      assertS3Error(res, 403, 'SignatureDoesNotMatch');
      assert.match(res.body, /curl&#39;s default for --data/);
      assert.match(res.body, /-H &#39;Content-Type: audio\/wav&#39;/);
    });

    it('answers 403 SignatureDoesNotMatch for a tampered URL', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const url = new URL(upload.upload_url);
      const variants: string[] = [];
      const edit = (change: (u: URL) => void) => {
        const u = new URL(url);
        change(u);
        variants.push(`${u.pathname}${u.search}`);
      };
      edit((u) => {
        u.pathname = u.pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}$/, randomUUID());
      });
      edit((u) =>
        u.searchParams.set(
          SIGNED_PARAMS.expires,
          String(Number(u.searchParams.get(SIGNED_PARAMS.expires)) + 1),
        ),
      );
      edit((u) => u.searchParams.set(SIGNED_PARAMS.signature, 'f'.repeat(64)));
      edit((u) => u.searchParams.set(SIGNED_PARAMS.contentType, 'audio/mpeg'));
      edit((u) => u.searchParams.append('x-extra', '1'));
      for (const variant of variants) {
        assertS3Error(
          await put(variant, 'bytes', { 'content-type': 'audio/wav' }),
          403,
          'SignatureDoesNotMatch',
        );
      }
      await assertNothingStored(c, upload);
    });

    it('answers 403 SignatureDoesNotMatch for another method', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      for (const method of ['GET', 'POST', 'DELETE', 'PATCH']) {
        const res = await put(
          pathOf(upload.upload_url),
          method === 'GET' || method === 'DELETE' ? '' : 'x',
          {
            'content-type': 'audio/wav',
          },
          method,
        );
        assertS3Error(res, 403, 'SignatureDoesNotMatch');
      }
      const head = await h.app.inject({ method: 'HEAD', url: pathOf(upload.upload_url) });
      assert.equal(head.statusCode, 403);
      await assertNothingStored(c, upload);
    });

    it('answers 403 AccessDenied "Request has expired" after expiry, and AccessDenied without a signature', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const key = decodeURIComponent(new URL(upload.upload_url).pathname.split('/object/')[1] ?? '');
      const past = Math.floor(Date.now() / 1000) - 5;
      const expired = signedPutUrl('http://h', storage.secret, key, 'audio/wav', past);
      const res = await put(pathOf(expired), 'bytes', { 'content-type': 'audio/wav' });
      assertS3Error(res, 403, 'AccessDenied');
      assert.match(res.body, /<Message>Request has expired<\/Message>/);
      assert.match(res.body, /<Expires>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/Expires><ServerTime>/);
      const unsigned = await put(new URL(upload.upload_url).pathname, 'bytes', {
        'content-type': 'audio/wav',
      });
      assertS3Error(unsigned, 403, 'AccessDenied');
      await assertNothingStored(c, upload);
    });

    it('answers 403 AccessDenied for a correctly signed key that no upload is waiting for, and keeps nothing', async () => {
      const c = await h.company();
      const key = `${c.id}/${randomUUID()}`;
      const url = signedPutUrl(
        'http://h',
        storage.secret,
        key,
        'audio/wav',
        Math.floor(Date.now() / 1000) + 60,
      );
      assertS3Error(await put(pathOf(url), 'bytes', { 'content-type': 'audio/wav' }), 403, 'AccessDenied');
      assert.equal(existsSync(join(storage.root, key)), false);
    });

    it('refuses a signed key that would leave the storage root (even with the secret)', async () => {
      const key = '../../escape';
      const url = signedPutUrl(
        'http://h',
        storage.secret,
        key,
        'audio/wav',
        Math.floor(Date.now() / 1000) + 60,
      );
      // new URL() would resolve the dots away: build the path by hand, as an attacker would.
      const encoded = `/storage/v1/object/..%2F..%2Fescape${url.slice(url.indexOf('?'))}`;
      assertS3Error(await put(encoded, 'bytes', { 'content-type': 'audio/wav' }), 400, 'InvalidArgument');
      assert.equal(existsSync(join(storage.root, '..', '..', 'escape')), false);
    });

    it('answers 411 MissingContentLength for a body without a length (chunked)', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const head =
        `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n';
      const res = await rawRequest(port, head, [Buffer.from('5\r\nhello\r\n0\r\n\r\n')], 'wait');
      assert.equal(res?.status, 411);
      assert.equal(s3Code(res?.body ?? ''), 'MissingContentLength');
      await assertNothingStored(c, upload);
    });

    it('answers 400 EntityTooLarge from the Content-Length alone, before reading the body', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      for (const length of [250_000_000, 10_000_000_000]) {
        const head =
          `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
          `Content-Length: ${length}\r\n\r\n`;
        // Nothing of the body is sent: the answer must come from the header.
        const res = await rawRequest(port, head, [], 'wait');
        assert.equal(res?.status, 400);
        assert.equal(res?.headers['content-type'], 'application/xml');
        assert.equal(s3Code(res?.body ?? ''), 'EntityTooLarge');
        assert.match(
          res?.body ?? '',
          new RegExp(`<ProposedSize>${length}</ProposedSize><MaxSizeAllowed>249999999</MaxSizeAllowed>`),
        );
      }
      await assertNothingStored(c, upload);
    });

    it('answers 400 IncompleteBody when the body is shorter than declared, and keeps nothing', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const head =
        `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
        'Content-Length: 1000\r\n\r\n';
      const res = await rawRequest(port, head, [Buffer.alloc(10), Buffer.alloc(10)], 'end');
      assert.equal(res?.status, 400, JSON.stringify(res));
      assert.equal(s3Code(res?.body ?? ''), 'IncompleteBody');
      await assertNothingStored(c, upload);
      // The same through inject, whose body simply ends early.
      const injected = await put(pathOf(upload.upload_url), Readable.from([Buffer.alloc(10)]) as never, {
        'content-type': 'audio/wav',
        'content-length': '1000',
      });
      assertS3Error(injected, 400, 'IncompleteBody');
      await assertNothingStored(c, upload);
    });

    it('answers Expect: 100-continue itself: a refusal before the body, 100 Continue once the checks pass', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const head = (type: string) =>
        `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n` +
        'Content-Length: 5\r\nExpect: 100-continue\r\n\r\n';
      // No body is ever sent: the refusal must not wait for one.
      const refused = await rawRequest(port, head('audio/mpeg'), [], 'wait');
      assert.equal(refused?.status, 403);
      assert.equal(s3Code(refused?.body ?? ''), 'SignatureDoesNotMatch');
      const accepted = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let data = '';
        socket.on('error', reject);
        socket.on('data', (chunk) => {
          data += chunk.toString('latin1');
          if (data.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !data.includes('200'))
            socket.write('hello');
          if (data.includes('\r\n\r\n', 25)) {
            socket.destroy();
            resolve(data);
          }
        });
        socket.on('connect', () => socket.write(head('audio/wav')));
      });
      assert.match(accepted, /^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 200 OK\r\n/);
      assert.equal(await statusOf(c, upload), 'uploaded');
      await h.runJobs();
    });

    it('leaves nothing behind when the client disconnects half way', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const head =
        `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
        'Content-Length: 10000000\r\n\r\n';
      await rawRequest(port, head, [Buffer.alloc(1 << 20), Buffer.alloc(1 << 20)], 'destroy');
      await assertNothingStored(c, upload);
    });

    it('answers 400 RequestTimeout when the body stalls', async () => {
      const slow = await startHarness(backend, { UPLOAD_IDLE_TIMEOUT: '1' });
      try {
        await slow.app.listen({ host: '127.0.0.1', port: 0 });
        const slowPort = (slow.app.server.address() as AddressInfo).port;
        const c = await slow.company();
        const upload = await issueTestUpload(slow, c);
        const head =
          `PUT ${pathOf(upload.upload_url)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\n` +
          'Content-Length: 1000\r\n\r\n';
        const started = Date.now();
        const res = await rawRequest(slowPort, head, [Buffer.alloc(10)], 'wait');
        assert.equal(res?.status, 400);
        assert.equal(s3Code(res?.body ?? ''), 'RequestTimeout');
        assert.ok(Date.now() - started >= 900);
        assert.deepEqual(await readdir(join(slow.dataDir, 'objects-tmp')), []);
      } finally {
        await slow.close();
      }
    });
  });
}
