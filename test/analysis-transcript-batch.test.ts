/**
 * Transcripts' analysis jobs due together run together: the job the worker claimed takes the others along
 * (one claim, one read, one write), and each ends as it would alone: ready with its analysis.ready event,
 * superseded by a newer run, and completed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { events, jobs } from '../src/adapters/db/schema.ts';
import { ANALYZE_CALL_JOB, analysisOf } from '../src/domain/analysis/analysis.ts';
import { conversationOf, post } from './helpers/calls.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`transcripts' analyses in one run (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    it('analyses every call of a burst at once, each as if alone', async () => {
      const c = await h.company();
      const create = (conversationId: string, stop: number) =>
        post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: conversationId,
          transcript: [
            { role: 'agent', text: 'hello', start: 0, stop },
            { role: 'customer', text: 'hi', start: stop, stop: stop + 1 },
          ],
        });
      const ids = Array.from({ length: 12 }, (_, i) => `burst-${i}`);
      for (const [i, id] of ids.entries()) assert.equal((await create(id, i + 1)).statusCode, 200);
      // The first call's transcript is sent again: its first run is superseded by the second.
      assert.equal((await create('burst-0', 20)).statusCode, 200);
      const calls = await Promise.all(ids.map((id) => conversationOf(h, c, id)));
      const db = h.services.database.db;
      const queued = await db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, ANALYZE_CALL_JOB)));
      assert.equal(queued.length, ids.length + 1);

      // The worker claims one job; that one takes the twelve others.
      assert.equal(await h.runJobs(), 1);

      const left = await db
        .select({ id: jobs.id })
        .from(jobs)
        .where(
          inArray(
            jobs.id,
            queued.map((j) => j.id),
          ),
        );
      assert.deepEqual(left, [], 'every job completed');
      for (const [i, call] of calls.entries()) {
        const analysis = await analysisOf(db, c.id, call.id);
        assert.equal(analysis?.status, 'ready', call.conversationId);
        assert.equal(analysis?.source, 'transcript');
        // The newer transcript's figures for the call sent twice.
        assert.deepEqual(analysis?.talk_s, { agent: i === 0 ? 20 : i + 1, customer: 1, unknown: 0 });
      }
      const ready = await db
        .select({ data: events.data })
        .from(events)
        .where(and(eq(events.companyId, c.id), eq(events.type, 'analysis.ready')));
      // One event per stored run: the superseded run wrote none.
      assert.equal(ready.length, ids.length);
      assert.deepEqual(
        new Set(ready.map((e) => (e.data as { conversation_id: string }).conversation_id)),
        new Set(ids),
      );
      for (const e of ready) assert.equal((e.data as { source: string }).source, 'transcript');
    });

    it('declares dead, not runs, a claim it takes along that is past its last attempt', async () => {
      const c = await h.company();
      const create = async (conversationId: string) => {
        const res = await post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: conversationId,
          transcript: [{ role: 'agent', text: 'hello', start: 0, stop: 1 }],
        });
        assert.equal(res.statusCode, 200, res.body);
        return (await conversationOf(h, c, conversationId)).id;
      };
      // The first is claimed by the worker; the second is taken along, its last attempt's worker gone.
      const first = await create('alone-1');
      const lost = await create('alone-2');
      const db = h.services.database.db;
      await db
        .update(jobs)
        .set({ attempts: sql`${jobs.maxAttempts}`, lockedUntil: sql`now() - interval '1 second'` })
        .where(and(eq(jobs.companyId, c.id), sql`${jobs.payload}->>'conversationUuid' = ${lost}`));

      assert.equal(await h.runJobs(), 1);
      assert.equal((await analysisOf(db, c.id, first))?.status, 'ready');
      // Not run, and not pending for ever either (docs/analysis.md): failed, with the reason.
      const given = await analysisOf(db, c.id, lost);
      assert.equal(given?.status, 'failed');
      assert.match(given?.reason ?? '', /last attempt stopped/);
      const [dead] = await db
        .select()
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), sql`${jobs.payload}->>'conversationUuid' = ${lost}`));
      assert.ok(dead && dead.attempts >= dead.maxAttempts && dead.lockedUntil === null, 'kept, dead');
      assert.match(dead.lastError ?? '', /last attempt stopped/);
    });
  });
}
