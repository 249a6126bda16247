/**
 * The transactional outbox (decision 27): every change writes exactly its event in its own transaction,
 * refused and no-op requests write none, and a rolled-back change leaves none.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { and, asc, eq, sql } from 'drizzle-orm';
import { finishAnalysisRun } from '../src/adapters/db/repositories/analyses.ts';
import { events } from '../src/adapters/db/schema.ts';
import { recordEvent } from '../src/domain/events/record.ts';
import { finalizeStaleHandoffRecords } from '../src/domain/handoffs/records.ts';
import { sweepUploads } from '../src/domain/uploads/sweep.ts';
import type { UploadUrlResponse } from '../src/domain/uploads/uploads.ts';
import { post } from './helpers/calls.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { createRecord, finalizeRecord, patchRecord, sleep } from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { issueTestUpload, makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';

for (const backend of BACKENDS) {
  describe(`the event outbox (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      [h, media] = await Promise.all([startHarness(backend), makeTestMedia(['stereo.wav'])]);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    /** The company's events in log order: type and data. */
    async function eventsOf(c: TestCompany) {
      const rows = await h.services.database.db
        .select({ type: events.type, data: events.data })
        .from(events)
        .where(eq(events.companyId, c.id))
        .orderBy(asc(events.txid), asc(events.seq));
      return rows.map((r) => ({ type: r.type, data: r.data as Record<string, unknown> }));
    }

    /** Runs `change` and returns the events it wrote. */
    async function written(c: TestCompany, change: () => Promise<unknown>) {
      const before = (await eventsOf(c)).length;
      await change();
      return (await eventsOf(c)).slice(before);
    }

    function expectStatus(expected: number) {
      return (res: { statusCode: number; body: string }) => {
        assert.equal(res.statusCode, expected, res.body);
        return res;
      };
    }

    it('call/create writes call.created for a new call and call.updated for an existing one', async () => {
      const c = await h.company();
      const body = { agent_email: c.agent.email, product_id: c.productId, conversation_id: 'conv-1' };
      const first = await written(c, () => post(h, c, '/api/v1/call/create', body).then(expectStatus(200)));
      assert.equal(first.length, 1);
      assert.equal(first[0]?.type, 'call.created');
      const data = first[0]?.data as Record<string, unknown>;
      assert.match(String(data.call_id), /^[0-9a-f-]{36}$/);
      assert.deepEqual(data, {
        call_id: data.call_id,
        conversation_id: 'conv-1',
        agent_email: c.agent.email,
        state: 'created',
      });
      const again = await written(c, () =>
        post(h, c, '/api/v1/call/create', {
          ...body,
          transcript: [{ role: 'agent', text: 'hello', start: 0, stop: 1 }],
          filename: 'a.wav',
        }).then(expectStatus(200)),
      );
      assert.equal(again.length, 1);
      assert.equal(again[0]?.type, 'call.updated');
      const updated = again[0]?.data as Record<string, unknown>;
      assert.equal(updated.call_id, data.call_id);
      assert.equal(typeof updated.upload_id, 'number');
      assert.ok(!('transcript' in updated), 'events carry no transcripts');
    });

    it('add_tags and the live endpoints write call.updated; refused requests write nothing', async () => {
      const c = await h.company();
      const pair = { agent_email: c.agent.email, conversation_id: 'conv-t' };
      await post(h, c, '/api/v1/call/create', { ...pair, product_id: c.productId }).then(expectStatus(200));
      const tagged = await written(c, () =>
        post(h, c, '/api/v1/call/add_tags', {
          ...pair,
          tags: [{ key: 'k', type: 'string', value: 'v' }],
        }).then(expectStatus(200)),
      );
      assert.deepEqual(
        tagged.map((e) => e.type),
        ['call.updated'],
      );
      const sale = await written(c, () =>
        post(h, c, '/api/v1/live/conv-t/data/sale', { closed: true }).then(expectStatus(200)),
      );
      const customer = await written(c, () =>
        post(h, c, '/api/v1/live/conv-t/data/customer', { account_id: 'A1' }).then(expectStatus(200)),
      );
      for (const list of [sale, customer]) {
        assert.equal(list.length, 1);
        assert.equal(list[0]?.type, 'call.updated');
        assert.equal(list[0]?.data.agent_email, c.agent.email);
      }
      const refused = await written(c, async () => {
        await post(h, c, '/api/v1/call/add_tags', { ...pair, conversation_id: 'nope', tags: [] });
        await post(h, c, '/api/v1/call/add_tags', {
          ...pair,
          conversation_id: 'nope',
          tags: [{ key: 'k', type: 'string', value: 'v' }],
        }).then(expectStatus(404));
        await post(h, c, '/api/v1/live/nope/data/sale', { closed: true }).then(expectStatus(404));
        await post(h, c, '/api/v1/call/create', { ...pair, product_id: 999_999 });
      });
      assert.deepEqual(refused, []);
    });

    it('start and stop write an event only when the state changes', async () => {
      const c = await h.company();
      const pair = { agent_email: c.agent.email, conversation_id: 'conv-s' };
      const created = await written(c, () =>
        post(h, c, '/api/v1/call/start', { ...pair, product_id: c.productId, metadata: { a: 1 } }).then(
          expectStatus(200),
        ),
      );
      assert.deepEqual(
        created.map((e) => [e.type, e.data.state]),
        [
          ['call.created', 'created'],
          ['call.started', 'live'],
        ],
      );
      const noop = await written(c, () => post(h, c, '/api/v1/call/start', pair).then(expectStatus(200)));
      assert.deepEqual(noop, []);
      const stopped = await written(c, () =>
        post(h, c, '/api/v1/call/stop', { ...pair, metadata: { b: 2 } }).then(expectStatus(200)),
      );
      assert.deepEqual(
        stopped.map((e) => e.type),
        ['call.stopped'],
      );
      assert.equal(stopped[0]?.data.state, 'stopped');
      const later = await written(c, async () => {
        await post(h, c, '/api/v1/call/stop', pair).then(expectStatus(200));
        await post(h, c, '/api/v1/call/start', pair).then(expectStatus(409));
        await post(h, c, '/api/v1/call/stop', { ...pair, conversation_id: 'nope' }).then(expectStatus(404));
      });
      assert.deepEqual(later, []);
      // A call made by create, then started: only call.started.
      await post(h, c, '/api/v1/call/create', {
        ...pair,
        conversation_id: 'conv-s2',
        product_id: c.productId,
      });
      const started = await written(c, () =>
        post(h, c, '/api/v1/call/start', { ...pair, conversation_id: 'conv-s2' }).then(expectStatus(200)),
      );
      assert.deepEqual(
        started.map((e) => e.type),
        ['call.started'],
      );
    });

    async function put(upload: UploadUrlResponse, bytes: Buffer) {
      const res = await h.app.inject({
        method: 'PUT',
        url: pathOf(upload.upload_url),
        headers: { 'content-type': upload.upload_content_type },
        payload: bytes,
      });
      assert.equal(res.statusCode, 200, res.body);
    }

    it('verification writes upload.ready or upload.rejected, and the sweep upload.expired', async () => {
      const c = await h.company();
      const good = await issueTestUpload(h, c);
      const bad = await issueTestUpload(h, c);
      const unused = await issueTestUpload(h, c, { expiresIn: 1 });
      await put(good, await readFile(media.path('stereo.wav')));
      await put(bad, await readFile(media.path('random.bin')));
      // The ready recording is then analysed (analysis.ready); only the upload events are looked at here.
      const verified = (await written(c, () => h.runJobs())).filter((e) => e.type.startsWith('upload.'));
      const byUpload = new Map(verified.map((e) => [e.data.upload_id, e]));
      assert.equal(verified.length, 2, JSON.stringify(verified));
      assert.equal(byUpload.get(good.upload_id)?.type, 'upload.ready');
      assert.deepEqual(byUpload.get(good.upload_id)?.data, {
        ...(byUpload.get(good.upload_id)?.data as object),
        conversation_id: good.conversation_id,
        agent_email: c.agent.email,
        status: 'ready',
        reason: null,
      });
      assert.equal(byUpload.get(bad.upload_id)?.type, 'upload.rejected');
      assert.equal(byUpload.get(bad.upload_id)?.data.status, 'rejected');
      const deps = { db: h.services.database.db, storage: h.services.storage, queue: h.services.queue };
      const sweep = () =>
        sweepUploads(deps, { expiryGraceSeconds: 600, now: new Date(Date.now() + 700_000) }).then(() => {});
      const expired = await written(c, sweep);
      assert.deepEqual(
        expired.map((e) => [e.type, e.data.upload_id]),
        [['upload.expired', unused.upload_id]],
      );
      assert.deepEqual(await written(c, sweep), [], 'a second sweep changes nothing and writes nothing');
      assert.deepEqual(await written(c, () => h.runJobs()), []);
    });

    it('handoff records write created, updated and finalized, with the call when linked', async () => {
      const c = await h.company();
      await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'conv-h',
      });
      let id = '';
      const created = await written(c, async () => {
        id = (await createRecord(h, c, { conversation_id: 'conv-h', metadata: { a: 1 } })).id;
      });
      assert.equal(created.length, 1);
      assert.equal(created[0]?.type, 'handoff.created');
      const data = created[0]?.data as Record<string, unknown>;
      assert.equal(data.handoff_id, id);
      assert.equal(data.conversation_id, 'conv-h');
      assert.equal(data.final, false);
      assert.match(String(data.call_id), /^[0-9a-f-]{36}$/);
      const merged = await written(c, () => patchRecord(h, c, id, { b: 2 }).then(expectStatus(200)));
      assert.deepEqual(
        merged.map((e) => e.type),
        ['handoff.updated'],
      );
      const finalized = await written(c, () => finalizeRecord(h, c, id).then(expectStatus(200)));
      assert.deepEqual(
        finalized.map((e) => [e.type, e.data.final]),
        [['handoff.finalized', true]],
      );
      const noop = await written(c, async () => {
        await finalizeRecord(h, c, id).then(expectStatus(200));
        await patchRecord(h, c, id, { c: 3 }).then(expectStatus(409));
        await finalizeRecord(h, c, id, { c: 3 }).then(expectStatus(409));
      });
      assert.deepEqual(noop, []);
      const unlinked = await written(c, () => createRecord(h, c));
      assert.deepEqual(Object.keys(unlinked[0]?.data as object).sort(), ['final', 'handoff_id']);
    });

    it('the stale sweep writes handoff.finalized for each record it finalizes', async () => {
      const c = await h.company();
      const stale = await createRecord(h, c);
      await sleep(1100);
      const swept = await written(c, () => finalizeStaleHandoffRecords(h.services.database.db, 1));
      const mine = swept.filter((e) => e.data.handoff_id === stale.id);
      assert.deepEqual(
        mine.map((e) => e.type),
        ['handoff.finalized'],
      );
    });

    it("every handoff event of a linked record, the stale sweep's too, carries the call's three ids (decision 21)", async () => {
      const c = await h.company();
      await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'conv-ids',
      });
      const ids = (e: { data: Record<string, unknown> }) => [
        e.data.conversation_id,
        e.data.agent_email,
        typeof e.data.call_id,
      ];
      const want = ['conv-ids', c.agent.email, 'string'];
      let id = '';
      const writes = await written(c, async () => {
        id = (await createRecord(h, c, { conversation_id: 'conv-ids' })).id;
        await patchRecord(h, c, id, { b: 2 }).then(expectStatus(200));
        await finalizeRecord(h, c, id).then(expectStatus(200));
      });
      assert.deepEqual(
        writes.map((e) => [e.type, ...ids(e)]),
        ['handoff.created', 'handoff.updated', 'handoff.finalized'].map((type) => [type, ...want]),
      );
      const callId = writes[0]?.data.call_id;
      assert.ok(writes.every((e) => e.data.call_id === callId && e.data.handoff_id === id));
      const stale = await createRecord(h, c, { conversation_id: 'conv-ids' });
      await sleep(1100);
      const swept = await written(c, () => finalizeStaleHandoffRecords(h.services.database.db, 1));
      const mine = swept.filter((e) => e.data.handoff_id === stale.id);
      assert.deepEqual(
        mine.map((e) => [e.type, ...ids(e), e.data.call_id === callId, e.data.final]),
        [['handoff.finalized', ...want, true, true]],
      );
    });

    it('a finished analysis writes analysis.ready', async () => {
      const c = await h.company();
      await post(h, c, '/api/v1/call/create', {
        agent_email: c.agent.email,
        product_id: c.productId,
        conversation_id: 'conv-a',
        transcript: [
          { role: 'agent', text: 'Hello.', start: 0, stop: 1 },
          { role: 'customer', text: 'Hi.', start: 1.5, stop: 2 },
        ],
      }).then(expectStatus(200));
      const analysed = await written(c, () => h.runJobs());
      assert.deepEqual(
        analysed.map((e) => [e.type, e.data.conversation_id, e.data.source]),
        [['analysis.ready', 'conv-a', 'transcript']],
      );
    });

    it('a run replaced before it stores its result stores nothing and writes no analysis.ready', async () => {
      const c = await h.company();
      const created = await written(c, () =>
        post(h, c, '/api/v1/call/create', {
          agent_email: c.agent.email,
          product_id: c.productId,
          conversation_id: 'conv-stale',
          transcript: [{ role: 'agent', text: 'Hello.', start: 0, stop: 1 }],
        }).then(expectStatus(200)),
      );
      const callId = String(created[0]?.data.call_id);
      // The store and its event are one statement: a run that is no longer the call's writes neither.
      let stored: boolean | undefined;
      const stale = await written(c, async () => {
        stored = await finishAnalysisRun(
          h.services.database.db,
          c.id,
          callId,
          randomUUID(),
          { status: 'ready', reason: null, figures: {}, method: 'test' },
          { type: 'analysis.ready', data: { call_id: callId } },
        );
      });
      assert.equal(stored, false);
      assert.deepEqual(stale, []);
      const current = await written(c, () => h.runJobs());
      assert.deepEqual(
        current.map((e) => [e.type, e.data.call_id]),
        [['analysis.ready', callId]],
      );
    });

    it('a rolled-back change leaves no event', async () => {
      const c = await h.company();
      const db = h.services.database.db;
      await assert.rejects(
        db.transaction(async (tx) => {
          await recordEvent(tx, c.id, 'call.updated', { call_id: 'x' });
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual(await eventsOf(c), []);
      await db.transaction((tx) => recordEvent(tx, c.id, 'call.updated', { call_id: 'x' }));
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(events)
        .where(and(eq(events.companyId, c.id), eq(events.type, 'call.updated')));
      assert.equal(row?.n, 1);
    });
  });
}
