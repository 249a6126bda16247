/**
 * The S3 backend against s3rver (an S3-compatible server started here on loopback). s3rver checks no
 * signature, so the signing itself is proven with the SDK's own SigV4 signer: recomputing the signature
 * as S3 does for the actual upload request matches the URL's for the pinned Content-Type only.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { CqsNodeClient } from '../packages/client/src/node.ts';
import type { S3Storage } from '../src/adapters/storage/s3.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import type { UploadUrlResponse } from '../src/domain/uploads/uploads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { startListening } from './helpers/listening.ts';
import { issueTestUpload, makeTestMedia, type TestMedia } from './helpers/media.ts';
import { get, makeCall, readKeys } from './helpers/reads.ts';
import {
  putTo,
  S3_TEST_BUCKET,
  S3_TEST_CREDENTIALS,
  S3_TEST_REGION,
  startS3rver,
  type TestS3,
} from './helpers/s3rver.ts';

const BUCKET = S3_TEST_BUCKET;
const REGION = S3_TEST_REGION;
const CREDENTIALS = S3_TEST_CREDENTIALS;

/** SHA-256 (and its HMAC) for the signer, from node:crypto. */
class Sha256 {
  readonly #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/**
 * The signature S3 computes for a PUT of this presigned URL sent with `contentType` (undefined: a GET,
 * which signs no header but the host): the URL's own
 * parameters (date, expiry, scope) and the request's headers, run through the SDK's SigV4 signer.
 */
async function signatureS3Expects(
  url: string,
  contentType: string | undefined,
  method = 'PUT',
): Promise<string> {
  const u = new URL(url);
  const query = Object.fromEntries(u.searchParams);
  const date = query['X-Amz-Date'] ?? '';
  const signingDate = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const expiresIn = Number(query['X-Amz-Expires']);
  // The signer adds these itself; the payload hash comes back as a header (S3 reads it from the query).
  for (const name of [
    'X-Amz-Signature',
    'X-Amz-Algorithm',
    'X-Amz-Credential',
    'X-Amz-Date',
    'X-Amz-Expires',
    'X-Amz-SignedHeaders',
    'X-Amz-Content-Sha256',
  ]) {
    delete query[name];
  }
  const payloadHash = u.searchParams.get('X-Amz-Content-Sha256') ?? '';
  const signer = new SignatureV4({
    service: 's3',
    region: REGION,
    credentials: CREDENTIALS,
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signed = await signer.presign(
    {
      method,
      protocol: u.protocol,
      hostname: u.hostname,
      port: Number(u.port),
      path: u.pathname,
      query,
      headers: {
        host: u.host,
        ...(contentType === undefined ? {} : { 'content-type': contentType }),
        ...(payloadHash ? { 'X-Amz-Content-Sha256': payloadHash } : {}),
      },
    },
    {
      signingDate,
      expiresIn,
      ...(contentType === undefined ? {} : { signableHeaders: new Set(['content-type']) }),
    },
  );
  return String(signed.query?.['X-Amz-Signature']);
}

for (const backend of BACKENDS) {
  describe(`S3 storage against an S3-compatible server (${backend})`, () => {
    let s3: TestS3;
    let h: Harness;
    let media: TestMedia;
    let storage: S3Storage;
    let s3Env: Record<string, string>;
    const ranges: (string | undefined)[] = [];

    before(async () => {
      s3 = await startS3rver();
      s3Env = s3.env;
      [h, media] = await Promise.all([
        startHarness(backend, s3Env),
        makeTestMedia(['stereo.wav', 'mono.wav', 'video.mp4']),
      ]);
      storage = h.services.storage as S3Storage;
      // Records the Range of every GetObject, to show that probing reads by ranges.
      storage.client.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as { Range?: string };
          if ((args.input as { Key?: string }).Key && 'Range' in input) ranges.push(input.Range);
          return next(args);
        },
        { step: 'initialize', name: 'recordRanges' },
      );
    });
    after(async () => {
      await h.close();
      await s3.close();
      await media.remove();
    });

    const deps = () => ({ db: h.services.database.db, storage: h.services.storage, queue: h.services.queue });

    async function show(c: TestCompany, upload: UploadUrlResponse) {
      const res = await h.request({ method: 'GET', url: `/api/v1/upload/${upload.upload_id}`, key: c.key });
      assert.equal(res.statusCode, 200);
      return res.json();
    }

    async function exists(url: string): Promise<boolean> {
      const key = decodeURIComponent(new URL(url).pathname.slice(`/${BUCKET}/`.length));
      try {
        await storage.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
        return true;
      } catch {
        return false;
      }
    }

    it('presigns a path-style PUT URL that signs content-type and carries no checksum', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, {
        contentType: 'video/mp4',
        filename: 'call.mp4',
        mediaKind: 'video',
      });
      const url = new URL(upload.upload_url);
      assert.equal(url.pathname.startsWith(`/${BUCKET}/${c.id}/`), true);
      assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'content-type;host');
      assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
      assert.match(url.searchParams.get('X-Amz-Credential') ?? '', new RegExp(`/${REGION}/s3/aws4_request$`));
      const names = [...url.searchParams.keys()].map((n) => n.toLowerCase());
      assert.ok(
        !names.some((n) => n.startsWith('x-amz-checksum') || n === 'x-amz-sdk-checksum-algorithm'),
        names.join(),
      );
      assert.equal(upload.upload_content_type, 'video/mp4');
      assert.equal(upload.expires_in, 3600);
    });

    it('signs the pinned Content-Type: S3 computes the same signature only for that type', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c);
      const given = new URL(upload.upload_url).searchParams.get('X-Amz-Signature');
      assert.equal(await signatureS3Expects(upload.upload_url, 'audio/wav'), given);
      for (const other of ['audio/mpeg', 'audio/WAV', 'application/octet-stream']) {
        assert.notEqual(await signatureS3Expects(upload.upload_url, other), given, other);
      }
      assert.notEqual(await signatureS3Expects(upload.upload_url, 'audio/wav', 'GET'), given);
    });

    it('finds the upload by HeadObject in the sweep and verifies it with ranged GETs', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, { separation: 'channels' });
      const body = await readFile(media.path('stereo.wav'));
      assert.equal(await putTo(upload.upload_url, 'audio/wav', body, body.length), 200);
      // The client's word is not taken: nothing changes until the service looks.
      assert.equal((await show(c, upload)).status, 'pending');
      const report = await sweepUploads(deps(), { expiryGraceSeconds: 600 });
      assert.ok(report.uploaded >= 1);
      const uploaded = await show(c, upload);
      assert.equal(uploaded.status, 'uploaded');
      assert.equal(uploaded.size, body.length);
      ranges.length = 0;
      await h.runJobs();
      const ready = await show(c, upload);
      assert.equal(ready.status, 'ready', ready.reason);
      assert.equal(ready.media.container, 'wav');
      assert.equal(ready.media.audio_channels, 2);
      assert.ok(ranges.length > 0 && ranges.every((r) => /^bytes=\d+-\d+$/.test(r ?? '')), ranges.join());
    });

    it('POST upload/{id}/complete HEADs the object and queues verification at once; 409 before the PUT', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, { separation: 'channels' });
      const complete = (key = c.key, id: number | string = upload.upload_id) =>
        h.request({ method: 'POST', url: `/api/v1/upload/${id}/complete`, key });
      const early = await complete();
      assert.equal(early.statusCode, 409);
      assert.match(early.json().error, /nothing has arrived at its upload_url yet; PUT the file there/);
      assert.equal((await show(c, upload)).status, 'pending');

      const body = await readFile(media.path('stereo.wav'));
      assert.equal(await putTo(upload.upload_url, 'audio/wav', body, body.length), 200);
      assert.equal((await complete((await h.company()).key)).statusCode, 404, 'another company’s upload');
      assert.equal((await complete(c.key, '1.5')).statusCode, 422);
      const done = await complete();
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(done.json().status, 'uploaded');
      assert.equal(done.json().size, body.length);
      // Repeating it changes nothing and queues nothing more.
      assert.equal((await complete()).json().status, 'uploaded');
      // The verification, then the analysis of the ready recording.
      assert.equal(await h.runJobs(), 2);
      assert.equal((await show(c, upload)).status, 'ready');
      assert.equal((await complete()).json().status, 'ready');
    });

    it('@cqs/client calls complete after its PUT: ready with no sweep after the PUT', async () => {
      // The sweep runs once at start and then not for an hour: only the complete call can start verification.
      const served = await startListening(backend, { ...s3Env, UPLOAD_SWEEP_INTERVAL: '3600' });
      try {
        const c = await served.h.company();
        const client = new CqsNodeClient({ baseUrl: served.baseUrl, apiKey: c.key });
        const body = await readFile(media.path('stereo.wav'));
        let putDone = 0;
        const { status } = await client.uploadRecording(
          {
            agent_email: c.agent.email,
            product_id: c.productId,
            filename: 'call.wav',
            body,
            size: body.length,
          },
          {
            verify: { timeoutMs: 120_000 },
            onProgress: ({ sent, total }) => {
              if (sent === total) putDone = Date.now();
            },
          },
        );
        assert.equal(status.status, 'ready', JSON.stringify(status));
        // A figure for the README, not an assertion (the machine may be busy): PUT answered → marked ready.
        console.log(
          `FIGURE s3_put_to_ready_ms=${Date.parse(status.updated_at) - putDone} bytes=${body.length}`,
        );
      } finally {
        await served.h.close();
      }
    });

    it('verifies a video and rejects mono audio for a call separated by channels', async () => {
      const c = await h.company();
      const video = await issueTestUpload(h, c, {
        contentType: 'video/mp4',
        filename: 'v.mp4',
        mediaKind: 'video',
      });
      const mono = await issueTestUpload(h, c, { separation: 'channels' });
      const mp4 = await readFile(media.path('video.mp4'));
      const wav = await readFile(media.path('mono.wav'));
      assert.equal(await putTo(video.upload_url, 'video/mp4', mp4, mp4.length), 200);
      assert.equal(await putTo(mono.upload_url, 'audio/wav', wav, wav.length), 200);
      await sweepUploads(deps(), { expiryGraceSeconds: 600 });
      await h.runJobs();
      const v = await show(c, video);
      assert.equal(v.status, 'ready');
      assert.equal(v.media.has_video, true);
      assert.equal(v.media.container, 'mp4');
      const m = await show(c, mono);
      assert.equal(m.status, 'rejected');
      assert.match(m.reason, /1 channel/);
      assert.equal(await exists(mono.upload_url), true, 'a rejected object under the limit is kept');
    });

    it('expires an upload with no object once its URL and the grace period are over', async () => {
      const c = await h.company();
      const unused = await issueTestUpload(h, c, { expiresIn: 1 });
      // Long enough for the PUT below on a busy machine (signing times are whole seconds); the sweep looks 5 s ahead.
      const late = await issueTestUpload(h, c, { expiresIn: 3 });
      const wav = await readFile(media.path('stereo.wav'));
      assert.equal(await putTo(late.upload_url, 'audio/wav', wav, wav.length), 200);
      await sweepUploads(deps(), { expiryGraceSeconds: 0, now: new Date(Date.now() + 5000) });
      assert.equal((await show(c, unused)).status, 'expired');
      assert.equal((await show(c, late)).status, 'uploaded', 'an object that arrived is never expired');
      await h.runJobs();
    });

    it('rejects and deletes an object of 250 MB or more, which S3 cannot refuse up front', async () => {
      const c = await h.company();
      const upload = await issueTestUpload(h, c, {
        contentType: 'application/octet-stream',
        filename: 'huge',
      });
      const size = 250_000_000;
      const block = Buffer.alloc(1 << 16);
      let sent = 0;
      const body = new Readable({
        read() {
          if (sent >= size) return void this.push(null);
          const chunk = block.subarray(0, Math.min(block.length, size - sent));
          sent += chunk.length;
          this.push(chunk);
        },
      });
      assert.equal(await putTo(upload.upload_url, 'application/octet-stream', body, size), 200);
      await sweepUploads(deps(), { expiryGraceSeconds: 600 });
      await h.runJobs();
      const rejected = await show(c, upload);
      assert.equal(rejected.status, 'rejected');
      assert.equal(rejected.size, size);
      assert.match(rejected.reason, /250000000 bytes/);
      assert.equal(await exists(upload.upload_url), false, 'the object was deleted');
    });

    it('presigns a GET that S3 signs as it is, answering with the upload type and serving ranges', async () => {
      const c = await h.company();
      const key = `${c.id}/recording-${Date.now()}.wav`;
      const body = await readFile(media.path('stereo.wav'));
      // Stored with another type than the upload's: the URL names the one to answer with.
      await storage.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, ContentType: 'binary/octet-stream' }),
      );
      const { url, expiresIn } = await storage.presignGet(key, 'audio/wav', 300);
      assert.equal(expiresIn, 300);
      const u = new URL(url);
      assert.equal(u.searchParams.get('X-Amz-Expires'), '300');
      assert.equal(u.searchParams.get('X-Amz-SignedHeaders'), 'host');
      assert.equal(u.searchParams.get('response-content-type'), 'audio/wav');
      // The response type is part of what is signed: changing it changes the signature S3 computes.
      const given = u.searchParams.get('X-Amz-Signature');
      assert.equal(await signatureS3Expects(url, undefined, 'GET'), given);
      const tampered = new URL(url);
      tampered.searchParams.set('response-content-type', 'text/html');
      assert.notEqual(await signatureS3Expects(String(tampered), undefined, 'GET'), given);

      const whole = await fetch(url);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-type'), 'audio/wav');
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), body);
      const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes 10-19/${body.length}`);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(10, 20));
    });

    it('redirects GET /api/v1/calls/{id}/recording to an S3 presigned GET of the ready upload', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const call = await makeCall(h, c, keys, { conversationId: 'on-s3', filename: 'call.wav' });
      const body = await readFile(media.path('stereo.wav'));
      assert.equal(await putTo(call.upload?.upload_url ?? '', 'audio/wav', body, body.length), 200);
      await sweepUploads(deps(), { expiryGraceSeconds: 600 });
      await h.runJobs();
      const res = await get(h, `/api/v1/calls/${call.id}/recording`, keys.admin);
      assert.equal(res.statusCode, 302, res.body);
      const location = new URL(String(res.headers.location));
      assert.equal(location.pathname.startsWith(`/${BUCKET}/${c.id}/`), true);
      assert.equal(location.searchParams.get('X-Amz-Expires'), '300');
      assert.equal(location.searchParams.get('response-content-type'), 'audio/wav');
      const part = await fetch(location, { headers: { range: 'bytes=0-3' } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-type'), 'audio/wav');
      assert.equal(await part.text(), 'RIFF');
    });

    it('serves no upload URLs of its own with S3 storage', async () => {
      const res = await h.app.inject({ method: 'PUT', url: '/storage/v1/object/a/b', payload: 'x' });
      assert.equal(res.statusCode, 404);
    });
  });
}
