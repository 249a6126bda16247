/**
 * A transcript's analysis job is completed by the statement that stores its result (one commit instead of
 * two): the worker then completes nothing, and a job whose claim is no longer its own is left alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { conversations, jobs } from '../src/adapters/db/schema.ts';
import { createMediaInfoProber, type MediaProber } from '../src/adapters/probe/mediainfo.ts';
import type { Job, JobQueue } from '../src/adapters/queue/queue.ts';
import { ANALYZE_CALL_JOB, analysisOf } from '../src/domain/analysis/analysis.ts';
import { jobHandlers } from '../src/worker/jobs.ts';
import { JOB_COMPLETED, runJob } from '../src/worker/worker.ts';
import { post } from './helpers/calls.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

const silent = { info() {}, warn() {}, error() {} };

for (const backend of BACKENDS) {
  describe(`analysis job completion (${backend})`, () => {
    let h: Harness;
    let prober: MediaProber;
    before(async () => {
      h = await startHarness(backend);
      prober = createMediaInfoProber();
    });
    after(async () => {
      prober.close();
      await h.close();
    });

    async function queuedAnalysis() {
      const c = await h.company();
      const conversationId = `job-${Math.random()}`;
      const res = await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: conversationId,
        transcript: [
          { role: 'agent', text: 'hello', start: 0, stop: 2 },
          { role: 'customer', text: 'hi', start: 2.5, stop: 3 },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const db = h.services.database.db;
      const [call] = await db
        .select({ id: conversations.id })
        .from(conversations)
        .where(and(eq(conversations.companyId, c.id), eq(conversations.conversationId, conversationId)));
      const mine = (await h.services.queue.claim(100, { only: [ANALYZE_CALL_JOB] })).filter(
        (j) => j.companyId === c.id,
      );
      assert.equal(mine.length, 1);
      return { c, callId: String(call?.id), job: mine[0] as Job };
    }

    const jobRow = (id: number) =>
      h.services.database.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.id, id));

    it('stores the result and deletes the job in one statement; the worker completes nothing', async () => {
      const { c, callId, job } = await queuedAnalysis();
      const handlers = jobHandlers(h.services, prober);
      assert.equal(await handlers[ANALYZE_CALL_JOB]?.(job), JOB_COMPLETED);
      assert.deepEqual(await jobRow(job.id), []);
      assert.equal((await analysisOf(h.services.database.db, c.id, callId))?.status, 'ready');

      // Through the worker: complete() is not called when the handler completed the job.
      const second = await queuedAnalysis();
      let completes = 0;
      const queue: JobQueue = {
        ...h.services.queue,
        complete: (j) => {
          completes++;
          return h.services.queue.complete(j);
        },
      };
      await runJob(queue, handlers, second.job, silent);
      assert.equal(completes, 0);
      assert.deepEqual(await jobRow(second.job.id), []);
    });

    it('leaves a job whose claim was taken over, and still stores the result', async () => {
      const { c, callId, job } = await queuedAnalysis();
      const handlers = jobHandlers(h.services, prober);
      // Another worker's claim: one attempt more than this one's.
      await h.services.database.db
        .update(jobs)
        .set({ attempts: job.attempts + 1 })
        .where(eq(jobs.id, job.id));
      assert.equal(await handlers[ANALYZE_CALL_JOB]?.(job), undefined);
      assert.equal((await jobRow(job.id)).length, 1);
      assert.equal((await analysisOf(h.services.database.db, c.id, callId))?.status, 'ready');
    });
  });
}
