/**
 * POST /api/v1/calls/{id}/tags: call/add_tags's tags on the call named by its id. add_tags finds the agent
 * among the company's active users, so once a call's agent was deactivated it found no call, or (a new
 * user holding the same email) another call: the web app, which tagged the call on screen through it,
 * wrote the tag to the wrong call without an error. By id, the call is the one named, and the rules are
 * add_tags's: all or nothing, its 422s, updated_at moves, a call.updated event; visibility is the read
 * side's (an agent's key: its own calls, else 404).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateUser } from '../src/adapters/db/repositories/users.ts';
import { post } from './helpers/calls.ts';
import { settleEvents } from './helpers/events.ts';
import type { TestCompany } from './helpers/fixtures.ts';
import { BACKENDS, type Harness, startHarness } from './helpers/harness.ts';
import { get, makeCall, type ReadKeys, readKeys } from './helpers/reads.ts';

for (const backend of BACKENDS) {
  describe(`POST /api/v1/calls/{id}/tags (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    async function company(): Promise<{ c: TestCompany; keys: ReadKeys }> {
      const c = await h.company();
      return { c, keys: await readKeys(c) };
    }
    const tagCall = (key: string, id: string, tags: unknown) =>
      h.request({ method: 'POST', url: `/api/v1/calls/${id}/tags`, key, body: { tags } });
    const tagsOf = async (keys: ReadKeys, id: string) => {
      const res = await get(h, `/api/v1/calls/${id}`, keys.admin);
      assert.equal(res.statusCode, 200, res.body);
      const call = res.json() as { tags: { key: string; value: unknown }[]; updated_at: string };
      return { tags: Object.fromEntries(call.tags.map((t) => [t.key, t.value])), updatedAt: call.updated_at };
    };

    it('tags the call named by its id, moves updated_at and writes call.updated, all or nothing', async () => {
      const { c, keys } = await company();
      const { id } = await makeCall(h, c, keys, {
        conversationId: 'by-id',
        tags: [{ key: 'queue', type: 'string', value: 'billing' }],
      });
      const before = await tagsOf(keys, id);
      const res = await tagCall(c.key, id, [
        { key: 'queue', type: 'string', value: 'escalated' },
        { key: 'qa_score', type: 'integer', value: 87 },
      ]);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { success: true });
      const after = await tagsOf(keys, id);
      assert.deepEqual(after.tags, { queue: 'escalated', qa_score: 87 });
      assert.ok(after.updatedAt > before.updatedAt, `${after.updatedAt} > ${before.updatedAt}`);
      // The 422s of add_tags, and nothing written: the valid first tag of a bad request is not stored.
      for (const [tags, error] of [
        [[], 'tags: must contain at least one tag'],
        [
          [
            { key: 'reviewed', type: 'boolean', value: true },
            { key: 'csat', type: 'boolean', value: 'yes' },
          ],
          'tags[1].value: must be true or false, as type is "boolean"',
        ],
      ] as const) {
        const bad = await tagCall(c.key, id, tags);
        assert.equal(bad.statusCode, 422, bad.body);
        assert.equal(bad.json().error, error);
      }
      assert.deepEqual((await tagsOf(keys, id)).tags, { queue: 'escalated', qa_score: 87 });
      await settleEvents(h);
      const { key: eventsKey } = await c.addKey(c.admin.id, ['events:read']);
      const feed = await h.request({
        method: 'GET',
        url: '/api/v1/events?type=call.updated',
        key: eventsKey,
      });
      const updates = (feed.json() as { events: { data: Record<string, unknown> }[] }).events;
      assert.deepEqual(updates.at(-1)?.data, {
        call_id: id,
        conversation_id: 'by-id',
        agent_email: c.agent.email,
        state: 'created',
      });
    });

    it('reaches the call of a deactivated agent, where add_tags finds another call with that email', async () => {
      const { c, keys } = await company();
      const { id: old } = await makeCall(h, c, keys, { conversationId: 'handed-over' });
      await updateUser(h.services.database.db, c.id, c.agent.id, { active: false });
      // call/add_tags cannot name the old call any more.
      const byPair = { agent_email: c.agent.email, conversation_id: 'handed-over' };
      const lost = await post(h, c, '/api/v1/call/add_tags', {
        ...byPair,
        tags: [{ key: 'reviewed', type: 'boolean', value: true }],
      });
      assert.equal(lost.statusCode, 404, lost.body);
      // A new user takes the email, with a call of the same conversation_id: add_tags now reaches that one.
      await c.addUser(c.agent.email);
      const { id: newer } = await makeCall(h, c, keys, { conversationId: 'handed-over' });
      assert.notEqual(newer, old);
      const res = await tagCall(c.key, old, [{ key: 'reviewed', type: 'boolean', value: true }]);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual((await tagsOf(keys, old)).tags, { reviewed: true });
      assert.deepEqual((await tagsOf(keys, newer)).tags, {});
    });

    it('needs the calls scope and a call the key may read: another agent’s, company’s or no call is a 404', async () => {
      const { c, keys } = await company();
      const { id } = await makeCall(h, c, keys, { conversationId: 'seen' });
      const tags = [{ key: 'reviewed', type: 'boolean', value: true }];
      // The agent's own call, with the agent's `calls` key.
      assert.equal((await tagCall(c.agentKey, id, tags)).statusCode, 200);
      // Another agent's key of the company, another company's admin, a made-up id, not an id at all.
      const other = await c.addUser(`other-${Date.now()}@example.test`);
      const { key: otherKey } = await c.addKey(other.id, ['calls']);
      const stranger = await h.company();
      for (const [key, target] of [
        [otherKey, id],
        [stranger.key, id],
        [c.key, '01900000-0000-7000-8000-000000000000'],
        [c.key, 'not-an-id'],
      ] as const) {
        const res = await tagCall(key, target, tags);
        assert.equal(res.statusCode, 404, res.body);
        assert.deepEqual(res.json(), { error: `call ${target} not found` });
      }
      // A key with calls:read only may read the call, not tag it.
      const readOnly = await tagCall(keys.admin, id, tags);
      assert.equal(readOnly.statusCode, 403, readOnly.body);
      assert.deepEqual((await tagsOf(keys, id)).tags, { reviewed: true });
    });
  });
}
