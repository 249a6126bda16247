import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import {
  callHandoffs,
  conversations,
  conversationTags,
  events,
  jobs,
  uploads,
} from '../src/adapters/db/schema.ts';
import { StorageUnavailableError } from '../src/adapters/storage/storage.ts';
import { ERASE_OBJECTS_JOB } from '../src/domain/calls/erase.ts';
import { RETENTION_SWEEP_JOB, updateRetention } from '../src/domain/calls/retention.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { makeTestMedia, pathOf, type TestMedia } from './helpers/media.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

const DAY = 86_400;
/** The database refused: the record is final (the error's cause says so). */
const refusedAsFinal = (e: unknown) => /is final/.test(String((e as Error).cause ?? e));

for (const backend of BACKENDS) {
  describe(`DELETE /api/v1/calls/{id} and retention (${backend})`, () => {
    let h: Harness;
    let media: TestMedia;
    before(async () => {
      h = await startHarness(backend);
      media = await makeTestMedia(['stereo.wav']);
    });
    after(async () => {
      await h.close();
      await media.remove();
    });

    async function company(): Promise<{ c: TestCompany; keys: ReadKeys }> {
      const c = await h.company();
      return { c, keys: await readKeys(c) };
    }
    const del = (id: string, key: string) => h.request({ method: 'DELETE', url: `/api/v1/calls/${id}`, key });

    /** PUTs the stereo WAV to an upload URL of the embedded storage. */
    async function storeRecording(uploadUrl: string | undefined) {
      const put = await h.app.inject({
        method: 'PUT',
        url: pathOf(uploadUrl ?? ''),
        headers: { 'content-type': 'audio/wav' },
        payload: await readFile(media.path('stereo.wav')),
      });
      assert.equal(put.statusCode, 200);
    }

    /** A call with everything: transcript, tags, metadata, a stored recording, a pending upload, handoff records (one final). */
    async function fullCall(c: TestCompany, keys: ReadKeys, name: string, startTime?: number) {
      const first = await makeCall(h, c, keys, {
        conversationId: name,
        ...(startTime !== undefined ? { startTime } : {}),
        transcript: [{ role: 'agent', text: 'secret', start: 0, stop: 1 }],
        tags: [{ key: 'account', type: 'string', value: 'A-1' }],
        filename: 'call.wav',
      });
      await storeRecording(first.upload?.upload_url);
      await makeCall(h, c, keys, { conversationId: name, filename: 'later.wav' });
      const start = await h.request({
        method: 'POST',
        url: '/api/v1/call/start',
        key: c.key,
        body: { agent_email: c.agent.email, conversation_id: name, metadata: { queue: 'billing' } },
      });
      assert.equal(start.statusCode, 200, start.body);
      const records: string[] = [];
      for (const final of [true, false]) {
        const r = await h.request({
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          body: { conversation_id: name, metadata: { n: 1 } },
        });
        assert.equal(r.statusCode, 201, r.body);
        records.push(r.json().handoff_id);
        if (final) {
          const f = await h.request({
            method: 'POST',
            url: `/api/v1/call-handoff/${r.json().handoff_id}/finalize`,
            key: c.writerKey,
          });
          assert.equal(f.statusCode, 200, f.body);
          // Read once, so the final record sits in the cache of final records.
          const read = await h.request({
            method: 'GET',
            url: `/api/v1/call-handoff/${records[0]}`,
            key: c.key,
          });
          assert.equal(read.statusCode, 200);
        }
      }
      const [row] = await h.services.database.db
        .select({ key: uploads.objectKey })
        .from(uploads)
        .where(and(eq(uploads.companyId, c.id), eq(uploads.id, first.upload?.upload_id ?? 0)));
      assert.ok(await h.services.storage.head(row?.key ?? ''), 'the recording is stored');
      return { id: first.id, records, objectKey: row?.key ?? '' };
    }

    async function leftovers(c: TestCompany, id: string) {
      const db = h.services.database.db;
      const count = async (
        table: typeof conversations | typeof uploads | typeof callHandoffs,
        column: unknown,
      ) =>
        (
          await db
            .select({ n: sql<number>`count(*)::int` })
            .from(table)
            .where(and(eq(table.companyId, c.id), eq(column as typeof uploads.conversationUuid, id)))
        )[0]?.n;
      return {
        conversations: await count(conversations, conversations.id),
        uploads: await count(uploads, uploads.conversationUuid),
        handoffs: await count(callHandoffs, callHandoffs.conversationUuid),
        tags: (
          await db
            .select({ n: sql<number>`count(*)::int` })
            .from(conversationTags)
            .where(and(eq(conversationTags.companyId, c.id), eq(conversationTags.conversationUuid, id)))
        )[0]?.n,
      };
    }
    const NONE = { conversations: 0, uploads: 0, handoffs: 0, tags: 0 };

    it('erases the call and everything linked to it, final handoff records and stored objects included; a second DELETE is 404', async () => {
      const { c, keys } = await company();
      const call = await fullCall(c, keys, 'erase-me');
      const res = await del(call.id, keys.admin);
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      assert.deepEqual(await leftovers(c, call.id), NONE);
      assert.equal(
        await h.services.storage.head(call.objectKey),
        undefined,
        'the object is gone before the 204',
      );
      assert.equal((await get(h, `/api/v1/calls/${call.id}`, keys.admin)).statusCode, 404);
      assert.deepEqual((await get(h, '/api/v1/calls?conversation_id=erase-me', keys.admin)).json().calls, []);
      for (const record of call.records) {
        const r = await h.request({ method: 'GET', url: `/api/v1/call-handoff/${record}`, key: c.key });
        assert.equal(r.statusCode, 404, `handoff ${record}`);
      }
      assert.equal((await del(call.id, keys.admin)).statusCode, 404);
      // One call.deleted event, written with the erasure, carrying the call's ids (and no more of it).
      const deleted = await h.services.database.db
        .select({ data: events.data })
        .from(events)
        .where(and(eq(events.companyId, c.id), eq(events.type, 'call.deleted')));
      assert.deepEqual(
        deleted.map((e) => e.data),
        [{ call_id: call.id, conversation_id: 'erase-me', agent_email: c.agent.email }],
      );
      // The queued job finds nothing left to delete and completes.
      await h.runJobs();
      assert.equal(await h.services.storage.head(call.objectKey), undefined);
    });

    it('deletes the objects again once every upload URL has expired, whatever the uploads became', async () => {
      const { c, keys } = await company();
      const call = await makeCall(h, c, keys, { conversationId: 'erase-ready', filename: 'call.wav' });
      await storeRecording(call.upload?.upload_url);
      await h.runJobs();
      assert.equal((await del(call.id, keys.admin)).statusCode, 204);
      await h.runJobs();
      // Its URL is still valid, and on S3 it would take another PUT after the erasure: a pass waits for it.
      const [later] = await h.services.database.db
        .select({ n: sql<number>`count(*)::int` })
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, ERASE_OBJECTS_JOB), sql`${jobs.runAt} > now()`));
      assert.equal(later?.n, 1);
    });

    it('deletes them again UPLOAD_EXPIRY_GRACE after the last URL expires, when a late PUT could still land', async () => {
      const { c, keys } = await company();
      const call = await makeCall(h, c, keys, { conversationId: 'erase-grace', filename: 'call.wav' });
      const [upload] = await h.services.database.db
        .select({ expiresAt: uploads.expiresAt })
        .from(uploads)
        .where(eq(uploads.companyId, c.id));
      assert.equal((await del(call.id, keys.admin)).statusCode, 204);
      const [later] = await h.services.database.db
        .select({ runAt: jobs.runAt })
        .from(jobs)
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, ERASE_OBJECTS_JOB), sql`${jobs.runAt} > now()`));
      const grace = ((later?.runAt.getTime() ?? 0) - (upload?.expiresAt.getTime() ?? 0)) / 1000;
      // The default UPLOAD_EXPIRY_GRACE, 600 s (a pass 300 s after it, before: a slow PUT outlived it).
      assert.ok(Math.abs(grace - h.services.config.uploads.expiryGraceSeconds) < 5, `${grace} s`);
    });

    /** A call with two stored recordings; their object keys. */
    async function twoRecordings(c: TestCompany, keys: ReadKeys, name: string) {
      const objectKeys: string[] = [];
      let id = '';
      for (const filename of ['a.wav', 'b.wav']) {
        const call = await makeCall(h, c, keys, { conversationId: name, filename });
        id = call.id;
        await storeRecording(call.upload?.upload_url);
      }
      const rows = await h.services.database.db
        .select({ key: uploads.objectKey })
        .from(uploads)
        .where(eq(uploads.companyId, c.id));
      objectKeys.push(...rows.map((r) => r.key));
      assert.equal(objectKeys.length, 2);
      return { id, objectKeys };
    }

    /** Runs the company's erase jobs now, however long their backoff; how many ran. */
    async function runEraseJobsNow(c: TestCompany) {
      await h.services.database.db
        .update(jobs)
        .set({ runAt: sql`now()` })
        .where(and(eq(jobs.companyId, c.id), eq(jobs.kind, ERASE_OBJECTS_JOB)));
      return h.runJobs();
    }

    it('deletes every object it can when one cannot be deleted', async () => {
      const { c, keys } = await company();
      const call = await twoRecordings(c, keys, 'erase-one-fails');
      const storage = h.services.storage;
      const realDelete = storage.delete;
      let calls = 0;
      // The first object the erasure deletes cannot be deleted; the other can.
      storage.delete = async (key) => {
        if (calls++ === 0) throw new StorageUnavailableError('this one object is out of reach');
        return realDelete.call(storage, key);
      };
      try {
        assert.equal((await del(call.id, keys.admin)).statusCode, 204);
        const stored = await Promise.all(call.objectKeys.map((k) => storage.head(k)));
        assert.equal(stored.filter((o) => o === undefined).length, 1, 'the other object is gone');
      } finally {
        storage.delete = realDelete;
      }
      await runEraseJobsNow(c);
      for (const key of call.objectKeys) assert.equal(await storage.head(key), undefined);
    });

    it("keeps trying to delete an erased call's objects through a long storage outage", async () => {
      const { c, keys } = await company();
      const call = await twoRecordings(c, keys, 'erase-outage');
      const storage = h.services.storage;
      const realDelete = storage.delete;
      storage.delete = async () => {
        throw new StorageUnavailableError('storage is out of reach');
      };
      try {
        assert.equal((await del(call.id, keys.admin)).statusCode, 204);
        // 40 attempts: at the queue's backoff, about 2.8 hours of outage (20 attempts, the old bound, ~1 h).
        for (let i = 0; i < 40; i++) await runEraseJobsNow(c);
      } finally {
        storage.delete = realDelete;
      }
      const [dead] = await h.services.database.db
        .select({ n: sql<number>`count(*)::int` })
        .from(jobs)
        .where(
          and(
            eq(jobs.companyId, c.id),
            eq(jobs.kind, ERASE_OBJECTS_JOB),
            sql`${jobs.attempts} >= ${jobs.maxAttempts}`,
          ),
        );
      assert.equal(dead?.n, 0, 'no erase job gave up');
      await runEraseJobsNow(c);
      for (const key of call.objectKeys) assert.equal(await storage.head(key), undefined);
    });

    it('checks the scope first (403), then that the user is an admin (403), then visibility (404)', async () => {
      const { c, keys } = await company();
      const { id } = await makeCall(h, c, keys, { conversationId: 'guarded' });
      const readOnly = (await c.addKey(c.admin.id, ['calls:read'])).key;
      assert.equal((await del(id, c.key)).statusCode, 403);
      assert.equal((await del(id, readOnly)).statusCode, 403);
      // The agent of the call, with the scope, is still not an admin.
      const agentRes = await del(id, keys.agent);
      assert.equal(agentRes.statusCode, 403);
      assert.match(agentRes.json().error, /admin/);
      const stranger = await company();
      assert.equal((await del(id, stranger.keys.admin)).statusCode, 404);
      assert.equal((await del('not-a-call', keys.admin)).statusCode, 404);
      assert.equal((await get(h, `/api/v1/calls/${id}`, keys.admin)).statusCode, 200, 'nothing was erased');
      assert.equal((await del(id, keys.admin)).statusCode, 204);
    });

    it('refuses to delete or change a final handoff record outside an erasure (the trigger)', async () => {
      const { c, keys } = await company();
      const call = await fullCall(c, keys, 'trigger');
      const db = h.services.database.db;
      const finalId = call.records[0] ?? '';
      await assert.rejects(
        db.delete(callHandoffs).where(and(eq(callHandoffs.companyId, c.id), eq(callHandoffs.id, finalId))),
        refusedAsFinal,
      );
      // Even inside a transaction that switched erasing on, an UPDATE of a final record stays refused.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.execute(sql`select set_config('cqs.erasing', 'on', true)`);
          await tx
            .update(callHandoffs)
            .set({ metadata: { changed: true } })
            .where(and(eq(callHandoffs.companyId, c.id), eq(callHandoffs.id, finalId)));
        }),
        refusedAsFinal,
      );
      // The setting is transaction-local: the next statement outside is refused again.
      await assert.rejects(
        db.delete(callHandoffs).where(and(eq(callHandoffs.companyId, c.id), eq(callHandoffs.id, finalId))),
        refusedAsFinal,
      );
      assert.equal((await leftovers(c, call.id)).handoffs, 2);
    });

    it('erases, by the daily sweep, calls older than the company’s retention period, and only those', async () => {
      const { c, keys } = await company();
      const now = Date.now() / 1000;
      const old = await fullCall(c, keys, 'old', now - 40 * DAY);
      const recent = await makeCall(h, c, keys, { conversationId: 'recent', startTime: now - 10 * DAY });
      const untouched = await company();
      const elsewhere = await makeCall(h, untouched.c, untouched.keys, {
        conversationId: 'old-elsewhere',
        startTime: now - 400 * DAY,
      });
      await assert.rejects(updateRetention({ db: h.services.database.db }, c.id, 0), /retention_days/);
      await updateRetention({ db: h.services.database.db }, c.id, 30);
      await h.services.queue.enqueue(h.services.database.db, { kind: RETENTION_SWEEP_JOB });
      await h.runJobs();
      assert.equal((await get(h, `/api/v1/calls/${old.id}`, keys.admin)).statusCode, 404);
      assert.deepEqual(await leftovers(c, old.id), NONE);
      assert.equal(await h.services.storage.head(old.objectKey), undefined);
      assert.equal((await get(h, `/api/v1/calls/${recent.id}`, keys.admin)).statusCode, 200);
      assert.equal(
        (await get(h, `/api/v1/calls/${elsewhere.id}`, untouched.keys.admin)).statusCode,
        200,
        'a company without retention keeps its calls',
      );
      // Cleared: nothing more is erased.
      await updateRetention({ db: h.services.database.db }, c.id, null);
      await h.services.queue.enqueue(h.services.database.db, { kind: RETENTION_SWEEP_JOB });
      await h.runJobs();
      assert.equal((await get(h, `/api/v1/calls/${recent.id}`, keys.admin)).statusCode, 200);
    });
  });
}
