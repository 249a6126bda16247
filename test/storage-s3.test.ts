/**
 * The S3 backend against s3rver (an S3-compatible server started here on loopback). s3rver checks no
 * signature, so the signing itself is proven with the SDK's own SigV4 signer: recomputing the signature
 * as S3 does for the actual upload request matches the URL's for the pinned Content-Type only.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import S3rver from 's3rver';
import type { S3Storage } from '../src/adapters/storage/s3.ts';
import { sweepUploads } from '../src/domain/upload-sweep.ts';
import type { UploadUrlResponse } from '../src/domain/uploads.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, makeTestMedia, type TestMedia } from './helpers/media.ts';

const BUCKET = 'cqs-test';
const REGION = 'eu-west-3';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

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
 * The signature S3 computes for a PUT of this presigned URL sent with `contentType`: the URL's own
 * parameters (date, expiry, scope) and the request's headers, run through the SDK's SigV4 signer.
 */
async function signatureS3Expects(url: string, contentType: string, method = 'PUT'): Promise<string> {
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
      headers: { host: u.host, 'content-type': contentType, 'X-Amz-Content-Sha256': payloadHash },
    },
    { signingDate, expiresIn, signableHeaders: new Set(['content-type']) },
  );
  return String(signed.query?.['X-Amz-Signature']);
}

/** PUTs a body to a presigned URL over HTTP/1.1 with a Content-Length; returns the status. */
function putTo(url: string, contentType: string, body: Buffer | Readable, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: `${u.pathname}${u.search}`,
        headers: { 'content-type': contentType, 'content-length': String(length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

for (const backend of BACKENDS) {
  describe(`S3 storage against an S3-compatible server (${backend})`, () => {
    let server: S3rver;
    let s3Dir: string;
    let h: Harness;
    let media: TestMedia;
    let storage: S3Storage;
    const ranges: (string | undefined)[] = [];

    before(async () => {
      s3Dir = await mkdtemp(join(tmpdir(), 'cqs-s3rver-'));
      server = new S3rver({
        address: '127.0.0.1',
        port: 0,
        silent: true,
        directory: s3Dir,
        configureBuckets: [{ name: BUCKET }],
      });
      const { port } = await server.run();
      [h, media] = await Promise.all([
        startHarness(backend, {
          STORAGE_BACKEND: 's3',
          S3_ENDPOINT: `http://127.0.0.1:${port}`,
          S3_BUCKET: BUCKET,
          S3_REGION: REGION,
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
          S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        }),
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
      await server.close();
      await media.remove();
      await rm(s3Dir, { recursive: true, force: true });
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
      const late = await issueTestUpload(h, c, { expiresIn: 1 });
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

    it('serves no upload URLs of its own with S3 storage', async () => {
      const res = await h.app.inject({ method: 'PUT', url: '/storage/v1/object/a/b', payload: 'x' });
      assert.equal(res.statusCode, 404);
    });
  });
}
