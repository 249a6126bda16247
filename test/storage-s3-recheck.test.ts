/**
 * On S3 the service does not see PUTs: bytes PUT to a presigned URL still valid after its upload was
 * verified stayed served as the verified recording (a `ready` upload with the first bytes' size). The
 * verification queues a look for once the URL has expired; when the ETag found is not the one verified, the
 * new bytes are verified (against s3rver on loopback).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import S3rver from 's3rver';
import { jobs } from '../src/adapters/db/schema.ts';
import { RECHECK_UPLOAD_JOB, recheckUpload } from '../src/domain/uploads/recheck.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, type TestMedia } from './helpers/media.ts';
import { makeCall, readKeys } from './helpers/reads.ts';

const BUCKET = 'cqs-test';

/** PUTs `body` to a presigned URL; its status. */
function putTo(url: string, contentType: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: `${u.pathname}${u.search}`,
        headers: { 'content-type': contentType, 'content-length': String(body.length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

for (const backend of BACKENDS) {
  describe(`S3 uploads PUT again after verification (${backend})`, () => {
    let server: S3rver;
    let s3Dir: string;
    let h: Harness;
    let media: TestMedia;
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
          S3_REGION: 'eu-west-3',
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: 'S3RVER',
          S3_SECRET_ACCESS_KEY: 'S3RVER',
        }),
        makeTestMedia(['stereo.wav']),
      ]);
    });
    after(async () => {
      await h.close();
      await server.close();
      await media.remove();
      await rm(s3Dir, { recursive: true, force: true });
    });
    const deps = () => ({ db: h.services.database.db, storage: h.services.storage, queue: h.services.queue });

    it('verifies bytes PUT after the upload was ready, once the URL has expired', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const call = await makeCall(h, c, keys, { conversationId: 'reput', filename: 'call.wav' });
      const url = call.upload?.upload_url ?? '';
      const uploadId = call.upload?.upload_id ?? 0;
      const wav = await readFile(media.path('stereo.wav'));
      const show = async () =>
        (await h.request({ method: 'GET', url: `/api/v1/upload/${uploadId}`, key: c.key })).json();
      assert.equal(await putTo(url, 'audio/wav', wav), 200);
      await sweepUploads(deps(), { expiryGraceSeconds: 600 });
      await h.runJobs();
      assert.equal((await show()).status, 'ready');
      // The look is queued for after the URL's expiry (an hour by default).
      const [queued] = await h.services.database.db
        .select({ later: sql<boolean>`${jobs.runAt} > now() + interval '50 minutes'` })
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, RECHECK_UPLOAD_JOB)));
      assert.equal(queued?.later, true);
      // Nothing changed: the look leaves the upload alone.
      assert.equal(await recheckUpload(deps(), c.id, uploadId), false);
      // The same URL, still valid: bytes that are not media, three times as many.
      const junk = Buffer.alloc(wav.length * 3, 0x41);
      assert.equal(await putTo(url, 'audio/wav', junk), 200);
      // The job, run as it will be at the URL's expiry.
      assert.equal(await recheckUpload(deps(), c.id, uploadId), true);
      await h.runJobs();
      const after = await show();
      assert.equal(after.status, 'rejected', JSON.stringify(after));
      assert.equal(after.size, junk.length);
    });
  });
}
