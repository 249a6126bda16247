/**
 * PUTs to an embedded upload URL that is used again or used late: a retry whose recording fails in the
 * database keeps the bytes in place (it deleted them, and with them the ready recording they had replaced),
 * and bytes that arrive after the upload was declared expired are refused, not made `ready` after
 * `upload.expired` was told.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, like } from 'drizzle-orm';
import { events } from '../src/adapters/db/schema.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';
import { get, makeCall, readKeys } from './helpers/reads.ts';

for (const backend of BACKENDS) {
  describe(`embedded upload URLs used again or late (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      [h, media] = await Promise.all([startHarness(backend), makeTestMedia(['stereo.wav'])]);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });
    const uploadStatus = async (key: string, id: number | undefined) =>
      (await h.request({ method: 'GET', url: `/api/v1/upload/${id}`, key })).json().status;

    it('keeps a ready recording when a retried PUT fails to be recorded in the database', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const call = await makeCall(h, c, keys, { conversationId: 'reput-fail', filename: 'call.wav' });
      const wav = await readFile(media.path('stereo.wav'));
      const put = () =>
        h.app.inject({
          method: 'PUT',
          url: pathOf(call.upload?.upload_url ?? ''),
          headers: { 'content-type': 'audio/wav' },
          payload: wav,
        });
      assert.equal((await put()).statusCode, 200);
      await h.runJobs();
      assert.equal(await uploadStatus(c.key, call.upload?.upload_id), 'ready');
      // The client sends the same PUT again; the database fails once while it is recorded.
      const queue = h.services.queue;
      const enqueue = queue.enqueue;
      queue.enqueue = async () => {
        queue.enqueue = enqueue;
        throw new Error('simulated database failure');
      };
      assert.equal((await put()).statusCode, 500);
      const link = await get(h, `/api/v1/calls/${call.id}/recording?redirect=false`, keys.admin);
      assert.equal(link.statusCode, 200, link.body);
      const read = await h.app.inject({ method: 'GET', url: pathOf(link.json().url) });
      assert.equal(read.statusCode, 200, 'the recording is still there');
      assert.deepEqual(read.rawPayload, wav);
    });

    it('refuses bytes that finish arriving after the upload was declared expired', async () => {
      const c = await h.company();
      const keys = await readKeys(c);
      const call = await makeCall(h, c, keys, { conversationId: 'late-put', filename: 'call.wav' });
      const wav = await readFile(media.path('stereo.wav'));
      const body = new PassThrough();
      const answer = h.app.inject({
        method: 'PUT',
        url: pathOf(call.upload?.upload_url ?? ''),
        headers: { 'content-type': 'audio/wav', 'content-length': String(wav.length) },
        payload: body,
      });
      body.write(wav.subarray(0, 1000));
      await sleep(200);
      // The sweep runs, past the URL's expiry and its grace, while the body is still arriving.
      const deps = { db: h.services.database.db, storage: h.services.storage, queue: h.services.queue };
      const report = await sweepUploads(deps, {
        expiryGraceSeconds: 600,
        now: new Date(Date.now() + 7_200_000),
      });
      assert.equal(report.expired, 1);
      body.end(wav.subarray(1000));
      assert.equal((await answer).statusCode, 403);
      await h.runJobs();
      assert.equal(await uploadStatus(c.key, call.upload?.upload_id), 'expired');
      const told = await h.services.database.db
        .select({ type: events.type })
        .from(events)
        .where(and(eq(events.companyId, c.id), like(events.type, 'upload.%')));
      assert.deepEqual(
        told.map((e) => e.type),
        ['upload.expired'],
      );
      assert.equal((await get(h, `/api/v1/calls/${call.id}/recording`, keys.admin)).statusCode, 404);
    });
  });
}
