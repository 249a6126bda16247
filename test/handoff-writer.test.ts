import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { callHandoffs } from '../src/adapters/db/schema.ts';
import {
  assertRecordShape,
  createRecord,
  finalizeRecord,
  type HandoffBody,
  insertConversation,
  patchRecord,
  readRecord,
} from './helpers/handoffs.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';

for (const backend of BACKENDS) {
  describe(`call-handoff writer (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    async function linkedConversation(id: string): Promise<string | null> {
      const [row] = await h.services.database.db
        .select({ uuid: callHandoffs.conversationUuid })
        .from(callHandoffs)
        .where(eq(callHandoffs.id, id));
      return row?.uuid ?? null;
    }

    it('creates a partial record: 201, six fields, final false, finalized_at null, ETag, Location', async () => {
      const c = await h.company();
      const res = await h.request({
        method: 'POST',
        url: '/api/v1/call-handoff',
        key: c.writerKey,
        body: { metadata: { intent: 'billing', dropped: null, nested: { kept: null } } },
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json() as HandoffBody;
      assertRecordShape(body);
      assert.equal(body.final, false);
      assert.equal(body.finalized_at, null);
      // A top-level null means "no such key"; nested values are stored as sent.
      assert.deepEqual(body.metadata, { intent: 'billing', nested: { kept: null } });
      assert.equal(body.created_at, body.updated_at);
      assert.equal(res.headers.location, `/api/v1/call-handoff/${body.handoff_id}`);
      assert.match(String(res.headers.etag), /^"[0-9a-f-]{36}-v1"$/);
      assert.equal(res.headers['cache-control'], 'no-store');
      const read = await readRecord(h, c, body.handoff_id);
      assert.deepEqual(read.json(), body);
    });

    it('creates a record without a body, and with an empty object', async () => {
      const c = await h.company();
      const bare = await h.request({ method: 'POST', url: '/api/v1/call-handoff', key: c.writerKey });
      assert.equal(bare.statusCode, 201, bare.body);
      assert.deepEqual(bare.json().metadata, {});
      const empty = await h.request({
        method: 'POST',
        url: '/api/v1/call-handoff',
        key: c.writerKey,
        body: {},
      });
      assert.equal(empty.statusCode, 201);
      assert.notEqual(empty.json().handoff_id, bare.json().handoff_id);
    });

    it('merges top-level keys: sets, replaces nested values whole, removes keys sent as null', async () => {
      const c = await h.company();
      const {
        id,
        body: created,
        etag,
      } = await createRecord(h, c, {
        metadata: { a: 1, b: { x: 1, y: 2 }, c: 'keep' },
      });
      const res = await patchRecord(h, c, id, { a: null, b: { x: 9 }, d: [1, 2], e: false });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as HandoffBody;
      assertRecordShape(body);
      assert.deepEqual(body.metadata, { b: { x: 9 }, c: 'keep', d: [1, 2], e: false });
      assert.equal(body.final, false);
      assert.equal(body.created_at, created.created_at);
      assert.ok(body.updated_at > created.updated_at, 'updated_at moves');
      assert.notEqual(res.headers.etag, etag, 'the ETag moves');
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    it('moves updated_at and the ETag on every PATCH, even an empty one, even within a millisecond', async () => {
      const c = await h.company();
      const { id, body: created } = await createRecord(h, c);
      const seen = [created.updated_at];
      const etags = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const res = await patchRecord(h, c, id, i === 0 ? {} : { [`k${i}`]: i });
        assert.equal(res.statusCode, 200);
        seen.push(res.json().updated_at);
        etags.add(String(res.headers.etag));
      }
      assert.equal(etags.size, 5);
      for (let i = 1; i < seen.length; i++)
        assert.ok((seen[i] as string) > (seen[i - 1] as string), seen.join());
    });

    it('finalizes with a last merge: final true, finalized_at = updated_at, immutable Cache-Control', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1, b: 2 } });
      const res = await finalizeRecord(h, c, id, { b: null, summary: 'done' });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as HandoffBody;
      assertRecordShape(body);
      assert.equal(body.final, true);
      assert.deepEqual(body.metadata, { a: 1, summary: 'done' });
      assert.equal(body.finalized_at, body.updated_at);
      assert.equal(res.headers['cache-control'], 'private, max-age=31536000, immutable');
    });

    it('finalizes without a body; finalizing again without metadata (or {}) returns it unchanged', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1 } });
      const first = await finalizeRecord(h, c, id);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().final, true);
      const again = await finalizeRecord(h, c, id);
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), first.json());
      assert.equal(again.headers.etag, first.headers.etag);
      const empty = await h.request({
        method: 'POST',
        url: `/api/v1/call-handoff/${id}/finalize`,
        key: c.writerKey,
        body: { metadata: {} },
      });
      assert.equal(empty.statusCode, 200);
      assert.deepEqual(empty.json(), first.json());
    });

    it('refuses every other write to a final record with 409, and nothing changes', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1 } });
      const final = (await finalizeRecord(h, c, id)).json();
      for (const res of [
        await patchRecord(h, c, id, { a: 2 }),
        await patchRecord(h, c, id, {}),
        await finalizeRecord(h, c, id, { a: 2 }),
        await finalizeRecord(h, c, id, { a: 1 }),
      ]) {
        assert.equal(res.statusCode, 409, res.body);
        assert.deepEqual(Object.keys(res.json()), ['error']);
        assert.match(res.json().error, /final/);
      }
      assert.deepEqual((await readRecord(h, c, id)).json(), final);
    });

    it('leaves the rule to the database: a direct UPDATE or DELETE of a final record fails with CQ409', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c, { metadata: { a: 1 } });
      await finalizeRecord(h, c, id);
      const db = h.services.database.db;
      const where = and(eq(callHandoffs.companyId, c.id), eq(callHandoffs.id, id));
      const codeOf = async (run: () => Promise<unknown>) => {
        try {
          await run();
          return 'no error';
        } catch (error) {
          let e: unknown = error;
          while (e && typeof e === 'object' && !('code' in e && typeof e.code === 'string') && 'cause' in e) {
            e = e.cause;
          }
          return (e as { code?: string }).code;
        }
      };
      assert.equal(
        await codeOf(() =>
          db
            .update(callHandoffs)
            .set({ metadata: { a: 2 } })
            .where(where),
        ),
        'CQ409',
      );
      assert.equal(await codeOf(() => db.update(callHandoffs).set({ final: false }).where(where)), 'CQ409');
      assert.equal(
        await codeOf(() => db.update(callHandoffs).set({ finalizedAt: sql`now()` }).where(where)),
        'CQ409',
      );
      assert.equal(await codeOf(() => db.delete(callHandoffs).where(where)), 'CQ409');
      assert.deepEqual((await readRecord(h, c, id)).json().metadata, { a: 1 });
    });

    it('answers 404 for an unknown record and for another company’s, 422 for an id that is not a UUID', async () => {
      const a = await h.company();
      const b = await h.company();
      const { id } = await createRecord(h, a);
      for (const res of [
        await patchRecord(h, a, randomUUID(), { x: 1 }),
        await patchRecord(h, b, id, { x: 1 }),
        await finalizeRecord(h, b, id),
        await finalizeRecord(h, b, id, { x: 1 }),
        await finalizeRecord(h, a, randomUUID()),
      ]) {
        assert.equal(res.statusCode, 404, res.body);
        assert.deepEqual(Object.keys(res.json()), ['error']);
      }
      assert.deepEqual((await readRecord(h, a, id)).json().metadata, {});
      assert.equal((await readRecord(h, a, id)).json().final, false);
      const bad = await patchRecord(h, a, 'not-a-uuid', { x: 1 });
      assert.equal(bad.statusCode, 422);
      assert.match(bad.json().error, /handoff_id/);
      assert.equal((await finalizeRecord(h, a, '1234')).statusCode, 422);
    });

    it('validates bodies: metadata must be an object, unknown fields are named, PATCH needs metadata', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const cases: [string, string, unknown, RegExp][] = [
        ['POST', '/api/v1/call-handoff', { metadata: [1, 2] }, /^metadata: /],
        ['POST', '/api/v1/call-handoff', { metadata: 'text' }, /^metadata: /],
        ['POST', '/api/v1/call-handoff', { metadata: null }, /^metadata: /],
        ['POST', '/api/v1/call-handoff', { meta: {} }, /^meta: unknown field$/],
        ['POST', '/api/v1/call-handoff', { company_id: c.id }, /^company_id: unknown field$/],
        ['POST', '/api/v1/call-handoff', { conversation_id: '' }, /^conversation_id: /],
        ['PATCH', `/api/v1/call-handoff/${id}`, {}, /^metadata: is required$/],
        ['PATCH', `/api/v1/call-handoff/${id}`, { metadata: [] }, /^metadata: /],
        ['PATCH', `/api/v1/call-handoff/${id}`, { metadata: {}, final: true }, /^final: unknown field$/],
        ['POST', `/api/v1/call-handoff/${id}/finalize`, { metadata: 1 }, /^metadata: /],
        ['POST', `/api/v1/call-handoff/${id}/finalize`, { final: true }, /^final: unknown field$/],
      ];
      for (const [method, url, body, message] of cases) {
        const res = await h.request({ method, url, key: c.writerKey, body });
        assert.equal(res.statusCode, 422, `${method} ${url} ${JSON.stringify(body)}: ${res.body}`);
        assert.match(res.json().error, message);
      }
      const notJson = await h.request({
        method: 'PATCH',
        url: `/api/v1/call-handoff/${id}`,
        key: c.writerKey,
        body: '{"metadata":',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(notJson.statusCode, 400);
      const notObject = await h.request({
        method: 'PATCH',
        url: `/api/v1/call-handoff/${id}`,
        key: c.writerKey,
        body: [1],
      });
      assert.equal(notObject.statusCode, 400);
      const text = await h.request({
        method: 'PATCH',
        url: `/api/v1/call-handoff/${id}`,
        key: c.writerKey,
        body: 'metadata',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(text.statusCode, 415);
      const after = (await readRecord(h, c, id)).json();
      assert.deepEqual(after.metadata, {});
    });

    it('needs the handoff:write scope to write, and the calls scope to read', async () => {
      const c = await h.company();
      const { id } = await createRecord(h, c);
      const write = await h.request({ method: 'POST', url: '/api/v1/call-handoff', key: c.key, body: {} });
      assert.equal(write.statusCode, 403);
      assert.equal(
        (
          await h.request({
            method: 'PATCH',
            url: `/api/v1/call-handoff/${id}`,
            key: c.key,
            body: { metadata: {} },
          })
        ).statusCode,
        403,
      );
      assert.equal(
        (await h.request({ method: 'POST', url: `/api/v1/call-handoff/${id}/finalize`, key: c.agentKey }))
          .statusCode,
        403,
      );
      const read = await h.request({ method: 'GET', url: `/api/v1/call-handoff/${id}`, key: c.writerKey });
      assert.equal(read.statusCode, 403);
      const anonymous = await h.request({ method: 'POST', url: '/api/v1/call-handoff', body: {} });
      assert.equal(anonymous.statusCode, 401);
      assert.equal((await readRecord(h, c, id)).json().final, false);
    });

    describe('link to a conversation', () => {
      it('links to the company’s conversation with that conversation_id', async () => {
        const c = await h.company();
        const uuid = await insertConversation(h, c, c.agent.id, 'conv-1');
        const { id, body } = await createRecord(h, c, { conversation_id: 'conv-1', metadata: { a: 1 } });
        assertRecordShape(body);
        assert.equal(await linkedConversation(id), uuid);
      });

      it('answers 404 for an unknown conversation and for another company’s', async () => {
        const a = await h.company();
        const b = await h.company();
        await insertConversation(h, b, b.agent.id, 'theirs');
        for (const conversation_id of ['nope', 'theirs']) {
          const res = await h.request({
            method: 'POST',
            url: '/api/v1/call-handoff',
            key: a.writerKey,
            body: { conversation_id },
          });
          assert.equal(res.statusCode, 404, res.body);
          assert.match(res.json().error, /conversation/);
        }
      });

      it('answers 409 when several agents hold the conversation_id, and agent_email picks one', async () => {
        const c = await h.company();
        const other = await c.addUser(`other-${randomUUID().slice(0, 6)}@example.test`);
        await insertConversation(h, c, c.agent.id, 'shared');
        const theirs = await insertConversation(h, c, other.id, 'shared');
        const ambiguous = await h.request({
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          body: { conversation_id: 'shared' },
        });
        assert.equal(ambiguous.statusCode, 409, ambiguous.body);
        assert.match(ambiguous.json().error, /ambiguous/);
        const { id } = await createRecord(h, c, {
          conversation_id: 'shared',
          agent_email: other.email.toUpperCase(),
        });
        assert.equal(await linkedConversation(id), theirs);
      });

      it('agent_email: unknown 404, held by two active users 409 with their ids, alone 422', async () => {
        const c = await h.company();
        await insertConversation(h, c, c.agent.id, 'conv');
        const unknown = await h.request({
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          body: { conversation_id: 'conv', agent_email: 'nobody@example.test' },
        });
        assert.equal(unknown.statusCode, 404);
        const twin = await c.addUser(c.agent.email.toLowerCase());
        const conflict = await h.request({
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          body: { conversation_id: 'conv', agent_email: c.agent.email },
        });
        assert.equal(conflict.statusCode, 409, conflict.body);
        assert.equal(conflict.json().agent_email, c.agent.email);
        assert.deepEqual([...conflict.json().conflicting_user_ids].sort(), [c.agent.id, twin.id].sort());
        const alone = await h.request({
          method: 'POST',
          url: '/api/v1/call-handoff',
          key: c.writerKey,
          body: { agent_email: c.agent.email },
        });
        assert.equal(alone.statusCode, 422);
        assert.match(alone.json().error, /^agent_email: /);
      });
    });
  });
}
