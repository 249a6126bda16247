/**
 * A run of an analysis or a transcription ends once. A job claimed again after its lease ran out (its
 * process stopped before the job was completed, or its run outlasted the lease) ran again: a second
 * `transcript.ready` and a second request to the paid engine, or a second `analysis.ready`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { and, asc, eq, sql } from 'drizzle-orm';
import { conversations, events, jobs } from '../src/adapters/db/schema.ts';
import { createMediaInfoProber } from '../src/adapters/probe/mediainfo.ts';
import { jobHandlers } from '../src/worker/jobs.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';
import {
  type FakeTranscriptionServer,
  startFakeTranscriptionServer,
} from './helpers/openai-transcription-server.ts';

for (const backend of BACKENDS) {
  describe(`a run ends once (${backend})`, () => {
    let h: Harness;
    let server: FakeTranscriptionServer;
    let media: TestMedia;
    const prober = createMediaInfoProber();
    before(async () => {
      server = await startFakeTranscriptionServer();
      media = await makeTestMedia(['stereo.wav']);
      h = await startHarness(backend, { TRANSCRIBER: 'openai', TRANSCRIBER_URL: `${server.url}/v1` });
    });
    after(async () => {
      await h.close();
      await server.close();
      await media.remove();
      prober.close();
    });

    /** A call whose recording is stored; its upload's verification left to the test. */
    async function recordedCall(c: TestCompany) {
      const res = await h.request({
        method: 'POST',
        url: '/api/v1/call/create',
        key: c.key,
        body: {
          agent_email: c.agent.email,
          product_id: c.productId,
          filename: 'x.wav',
          content_type: 'audio/wav',
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const put = await h.app.inject({
        method: 'PUT',
        url: pathOf(res.json().upload_url),
        headers: { 'content-type': 'audio/wav' },
        payload: await readFile(media.path('stereo.wav')),
      });
      assert.equal(put.statusCode, 200);
    }

    const handlers = () => jobHandlers(h.services, prober);
    const eventTypes = async (c: TestCompany) =>
      (
        await h.services.database.db
          .select({ type: events.type })
          .from(events)
          .where(eq(events.companyId, c.id))
          .orderBy(asc(events.id))
      ).map((e) => e.type);
    /** Ends every lease of the company's jobs, as the time passing would. */
    const expireLeases = (c: TestCompany) =>
      h.services.database.db
        .update(jobs)
        .set({ lockedUntil: sql`now() - interval '1 second'` })
        .where(and(eq(jobs.companyId, c.id), sql`${jobs.lockedUntil} is not null`));

    /** Claims and runs one job of `kind` as the worker does, completing it unless `complete` is false. */
    async function runOne(kind: string, complete = true) {
      const [job] = await h.services.queue.claim(1, { only: [kind] });
      assert.ok(job, kind);
      await handlers()[kind]?.(job);
      if (complete) await h.services.queue.complete(job);
      return job;
    }

    it('does not transcribe again when the job is claimed again after its transcript was stored', async () => {
      const c = await h.company();
      await recordedCall(c);
      await runOne('upload.verify');
      await runOne('call.analyze');
      // The transcript commits; the process stops before the job is completed; its lease runs out.
      await runOne('call.transcribe', false);
      const requests = server.received.length;
      await expireLeases(c);
      await h.runJobs();
      assert.equal(server.received.length, requests, 'the engine was asked again');
      const types = await eventTypes(c);
      assert.equal(types.filter((t) => t === 'transcript.ready').length, 1, types.join(', '));
    });

    it('writes one analysis.ready when a second worker runs the job its first still holds', async () => {
      const c = await h.company();
      await recordedCall(c);
      await runOne('upload.verify');
      const [first] = await h.services.queue.claim(1, { only: ['call.analyze'] });
      assert.ok(first);
      // The first run outlasts its lease: another worker claims the job and runs it too.
      await expireLeases(c);
      const [second] = await h.services.queue.claim(1, { only: ['call.analyze'] });
      assert.ok(second);
      await handlers()['call.analyze']?.(first);
      await handlers()['call.analyze']?.(second);
      const types = await eventTypes(c);
      assert.equal(types.filter((t) => t === 'analysis.ready').length, 1, types.join(', '));
    });

    it('fails an analysis and a transcription whose worker stopped on every attempt, not pending for ever', async () => {
      await h.runJobs(); // what the tests before left
      const c = await h.company();
      await recordedCall(c);
      await runOne('upload.verify');
      // Each attempt's worker stops (killed: out of memory, a deploy) and its lease runs out.
      for (let attempt = 1; attempt <= 5; attempt++) {
        const claimed = await h.services.queue.claim(10, { only: ['call.analyze', 'call.transcribe'] });
        assert.equal(claimed.length, 2, `attempt ${attempt}`);
        await expireLeases(c);
      }
      await h.runJobs();
      const reader = await c.addKey(c.admin.id, ['calls:read']);
      const [row] = await h.services.database.db
        .select({ id: conversations.id })
        .from(conversations)
        .where(eq(conversations.companyId, c.id));
      const call = (
        await h.request({ method: 'GET', url: `/api/v1/calls/${row?.id}`, key: reader.key })
      ).json();
      assert.equal(call.analysis?.status, 'failed', JSON.stringify(call.analysis));
      assert.match(call.analysis?.reason ?? '', /stopped before finishing/);
      assert.equal(call.transcription?.status, 'failed', JSON.stringify(call.transcription));
    });
  });
}
