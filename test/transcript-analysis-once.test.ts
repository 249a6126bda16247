/**
 * A transcript's analysis job run twice (its lease ran out: claimed again while the first run was on) wrote
 * `analysis.ready` twice through the batch path, which stored without the recording path's
 * `status = 'pending'` guard: a run ends once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { events, jobs } from '../src/adapters/db/schema.ts';
import { runTranscriptAnalyses, TRANSCRIPT_JOBS } from '../src/domain/analysis/transcript-runs.ts';
import { post } from './helpers/calls.ts';
import { type Harness, startHarness } from './helpers/harness.ts';

describe('transcript analysis run twice', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pglite');
  });
  after(() => h.close());
  it('writes one analysis.ready', async () => {
    const c = await h.company();
    const res = await post(h, c, '/api/v1/call/create', {
      agent_email: c.agent.email,
      product_id: c.productId,
      conversation_id: 'twice',
      transcript: [
        { role: 'agent', text: 'hello', start: 0, stop: 2 },
        { role: 'customer', text: 'hi', start: 2, stop: 3 },
      ],
    });
    assert.equal(res.statusCode, 200);
    const db = h.services.database.db;
    const [first] = await h.services.queue.claim(1, TRANSCRIPT_JOBS, 1);
    assert.ok(first);
    // The first claim's lease runs out (a stalled process); another worker claims the same job.
    await db.update(jobs).set({ lockedUntil: sql`now() - interval '1 second'` }).where(eq(jobs.id, first.id));
    const [second] = await h.services.queue.claim(1, TRANSCRIPT_JOBS, 60);
    assert.equal(second?.id, first.id);
    await runTranscriptAnalyses(db, [first]);
    await runTranscriptAnalyses(db, [second]);
    const ready = await db
      .select()
      .from(events)
      .where(and(eq(events.companyId, c.id), eq(events.type, 'analysis.ready')));
    assert.equal(ready.length, 1);
  });
});
