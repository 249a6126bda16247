/**
 * On S3 the service does not see PUTs: bytes PUT to a presigned URL still valid after its upload was
 * verified stayed served as the verified recording (a `ready` upload with the first bytes' size). The
 * verification queues a look for once the URL has expired; when the ETag found is not the one verified, the
 * new bytes are verified (against s3rver on loopback).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { jobs } from '../src/adapters/db/schema.ts';
import { RECHECK_UPLOAD_JOB, recheckUpload } from '../src/domain/uploads/recheck.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, type TestMedia } from './helpers/media.ts';
import { makeCall, readKeys } from './helpers/reads.ts';
import { putTo, startS3rver, type TestS3 } from './helpers/s3rver.ts';

for (const backend of BACKENDS) {
  describe(`S3 uploads PUT again after verification (${backend})`, () => {
    let s3: TestS3;
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      s3 = await startS3rver();
      [h, media] = await Promise.all([startHarness(backend, s3.env), makeTestMedia(['stereo.wav'])]);
    });
    after(async () => {
      await h.close();
      await s3.close();
      await media.remove();
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
      assert.equal(await putTo(url, 'audio/wav', wav, wav.length), 200);
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
      assert.equal(await putTo(url, 'audio/wav', junk, junk.length), 200);
      // The job, run as it will be at the URL's expiry.
      assert.equal(await recheckUpload(deps(), c.id, uploadId), true);
      await h.runJobs();
      const after = await show();
      assert.equal(after.status, 'rejected', JSON.stringify(after));
      assert.equal(after.size, junk.length);
    });
  });
}
